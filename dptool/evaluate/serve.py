"""`dptool serve`: the benchmark's environment (dptool.evaluate.environment) as an MCP server, on the official SDK.

Each MCP tool is a thin call of `ServedRun.call`, which replies and records; a failed call's reply is the MCP
result `isError` with the same one line. A call the SDK refuses before any tool runs (arguments of the wrong type,
an unknown tool) is recorded too, by a middleware that sees every `tools/call`.
"""

from __future__ import annotations

import contextvars
import json
import re
import time
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from dptool import __version__
from dptool.evaluate.environment import FLOW, NEXT, SUBMIT, TOOLS, Reply, ServedRun, failed

# set by the middleware around each tools/call, flipped by the tool when it runs (the SDK runs a tool in a worker
# thread with a copy of this context: the list is shared, the flag seen)
_ran: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar("dptool_tool_ran", default=None)

Result = CallToolResult
Answer = str | float | int | bool | dict | list | None
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
FLOW_HINT = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                            open_world_hint=False)


def _arg(tool: str, name: str) -> Any:
    spec = (TOOLS.get(tool) or FLOW[tool]).arguments
    return Field(description=spec[name])


def build_server(run: ServedRun) -> MCPServer:
    """The MCP server of one served run: the environment's tools, next_task, submit_answer and a next_task prompt."""
    server = MCPServer("dptool", title="dptool benchmark", version=__version__, instructions=run.instructions,
                       log_level="WARNING", middleware=[_Recorder(run)])

    def call(tool: str, arguments: dict) -> CallToolResult:
        flag = _ran.get()
        if flag is not None:
            flag[0] = True
        reply = run.call(tool, arguments)
        # returned, not raised: a raised ToolError reaches the agent behind "Error executing tool …"
        return CallToolResult(content=[TextContent(type="text", text=reply.text)], is_error=reply.error)

    def execute_sql(sql: Annotated[str, _arg("execute_sql", "sql")]) -> Result:
        return call("execute_sql", {"sql": sql})

    def get_all_models() -> Result:
        return call("get_all_models", {})

    def get_model_details(name: Annotated[str, _arg("get_model_details", "name")]) -> Result:
        return call("get_model_details", {"name": name})

    def list_metrics(search: Annotated[str | list[str] | None, _arg("list_metrics", "search")] = None) -> Result:
        return call("list_metrics", {"search": search})

    def search_kb(query: Annotated[str, _arg("search_kb", "query")],
                  k: Annotated[int, _arg("search_kb", "k")] = 5) -> Result:
        return call("search_kb", {"query": query, "k": k})

    def get_kb_document(path: Annotated[str, _arg("get_kb_document", "path")]) -> Result:
        return call("get_kb_document", {"path": path})

    def next_task() -> Result:
        return call(NEXT, {})

    def submit_answer(task_id: Annotated[str, _arg(SUBMIT, "task_id")],
                      answer: Annotated[Answer, _arg(SUBMIT, "answer")]) -> Result:
        return call(SUBMIT, {"task_id": task_id, "answer": answer})

    for fn in (execute_sql, get_all_models, get_model_details, list_metrics, search_kb, get_kb_document):
        server.add_tool(fn, name=fn.__name__, description=TOOLS[fn.__name__].description, annotations=READ_ONLY,
                        structured_output=False)
    for fn in (next_task, submit_answer):
        server.add_tool(fn, name=fn.__name__, description=FLOW[fn.__name__].description, annotations=FLOW_HINT,
                        structured_output=False)

    @server.prompt(name=NEXT, title="Next benchmark task",
                   description="Hands out the next task (as the next_task tool does), with how to work on it.")
    def next_task_prompt() -> str:
        reply = run.call(NEXT, {})
        handed = json.loads(reply.text)
        if handed.get("done"):
            return handed["message"]
        return (f"{run.instructions}\n\nTask {handed['task_id']} (attempt {handed['attempt']} of {handed['epochs']}):"
                f"\n\n{run.task_prompt(run.open.task)}\n\nWhen you know the answer, call "
                f"submit_answer(task_id=\"{handed['task_id']}\", answer=...).")

    return server


class _Recorder:
    """Records the tools/call requests no tool saw (refused by the SDK's argument check, or an unknown tool)."""

    def __init__(self, run: ServedRun):
        self.run = run

    async def __call__(self, ctx, call_next):
        if ctx.method != "tools/call":
            return await call_next(ctx)
        ran = [False]
        token = _ran.set(ran)
        start = time.monotonic()
        try:
            result = await call_next(ctx)
        except Exception as exc:
            if not ran[0]:
                self._record(ctx.params, failed(' '.join(str(exc).split())[:300]), start)
            raise
        finally:
            _ran.reset(token)
        if ran[0]:
            return result
        reply = _reply_of(result)
        if reply.error:  # the SDK's own words span lines and link to pydantic's docs: one line, as the tools say
            text = re.sub(r"\s*For further information visit \S+", "", reply.text)
            reply = failed(" ".join(text.split()))
            result = CallToolResult(content=[TextContent(type="text", text=reply.text)], is_error=True)
        self._record(ctx.params, reply, start)
        return result

    def _record(self, params: Any, reply: Reply, start: float) -> None:
        params = params if isinstance(params, dict) else {}
        self.run.record(str(params.get("name")), params.get("arguments"), reply, time.monotonic() - start)


def _reply_of(result: Any) -> Reply:
    data = result.model_dump(by_alias=True) if hasattr(result, "model_dump") else result or {}
    text = "\n".join(c.get("text", "") for c in data.get("content") or [] if isinstance(c, dict))
    return Reply(text, bool(data.get("isError") or data.get("is_error")))


def serve(run: ServedRun, *, http: bool = False, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve over stdio (until the client closes it) or streamable HTTP at http://HOST:PORT/mcp (until interrupted)."""
    server = build_server(run)
    if http:
        server.run("streamable-http", host=host, port=port)
    else:
        server.run("stdio")
