"""`dptool serve`: the benchmark's environment (dptool.evaluate.environment) as an MCP server, on the official SDK.

Each MCP tool is a thin call of `ServedRun.call`, which replies and records; a failed call's reply is the MCP
result `isError` with the same one line. A call the SDK refuses before any tool runs (arguments of the wrong type,
an unknown tool) is recorded too, by a middleware that sees every `tools/call`. The middleware also names the
caller: over HTTP the MCP session (its Mcp-Session-Id header; a request of the stateless revision, which has none,
is a caller of its own and reaches its attempt by `attempt_id`), over stdio the server process.
"""

from __future__ import annotations

import contextvars
import io
import json
import os
import re
import signal
import sys
import threading
import time
import uuid
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from dptool import __version__
from dptool.evaluate.environment import FLOW, NEXT, SUBMIT, TOOLS, Reply, failed
from dptool.evaluate.served_run import HANDLE, HTTP_SESSION, ServedRun
from dptool.evaluate.stdio_screen import REFUSED, ScreenedLines

# set by the middleware around each tools/call, flipped by the tool when it runs (the SDK runs a tool in a worker
# thread with a copy of this context: the list is shared, the flag seen)
_ran: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar("dptool_tool_ran", default=None)
# who makes the request, set by the middleware (None: this stdio server's one client)
_caller: contextvars.ContextVar[str | None] = contextvars.ContextVar("dptool_caller", default=None)

Result = CallToolResult
Answer = str | float | int | bool | dict | list | None
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
FLOW_HINT = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                            open_world_hint=False)


def _arg(tool: str, name: str) -> Any:
    spec = (TOOLS.get(tool) or FLOW[tool]).arguments
    return Field(description=spec[name])


Handle = Annotated[str | None, Field(description="Optional: the attempt_id next_task gave; the call is recorded in "
                                                 "that attempt.")]


def build_server(run: ServedRun) -> MCPServer:
    """The MCP server of one served run: the environment's tools, next_task, submit_answer and a next_task prompt."""
    server = MCPServer("dptool", title="dptool benchmark", version=__version__, instructions=run.instructions,
                       log_level="WARNING", middleware=[_Recorder(run)])

    def call(tool: str, arguments: dict) -> CallToolResult:
        flag = _ran.get()
        if flag is not None:
            flag[0] = True
        reply = run.call(tool, arguments, _caller.get())
        # returned, not raised: a raised ToolError reaches the agent behind "Error executing tool …"
        return CallToolResult(content=[TextContent(type="text", text=reply.text)], is_error=reply.error)

    def with_handle(arguments: dict, attempt_id: str | None) -> dict:
        return {**arguments, HANDLE: attempt_id} if attempt_id is not None else arguments

    def execute_sql(sql: Annotated[str, _arg("execute_sql", "sql")], attempt_id: Handle = None) -> Result:
        return call("execute_sql", with_handle({"sql": sql}, attempt_id))

    def get_all_models(attempt_id: Handle = None) -> Result:
        return call("get_all_models", with_handle({}, attempt_id))

    def get_model_details(name: Annotated[str, _arg("get_model_details", "name")],
                          attempt_id: Handle = None) -> Result:
        return call("get_model_details", with_handle({"name": name}, attempt_id))

    def list_metrics(search: Annotated[str | list[str] | None, _arg("list_metrics", "search")] = None,
                     attempt_id: Handle = None) -> Result:
        return call("list_metrics", with_handle({"search": search}, attempt_id))

    def search_kb(query: Annotated[str, _arg("search_kb", "query")],
                  k: Annotated[int, _arg("search_kb", "k")] = 5, attempt_id: Handle = None) -> Result:
        return call("search_kb", with_handle({"query": query, "k": k}, attempt_id))

    def get_kb_document(path: Annotated[str, _arg("get_kb_document", "path")], attempt_id: Handle = None) -> Result:
        return call("get_kb_document", with_handle({"path": path}, attempt_id))

    def next_task() -> Result:
        return call(NEXT, {})

    def submit_answer(task_id: Annotated[str, _arg(SUBMIT, "task_id")],
                      answer: Annotated[Answer, _arg(SUBMIT, "answer")],
                      attempt_id: Annotated[str | None, _arg(SUBMIT, HANDLE)] = None) -> Result:
        return call(SUBMIT, with_handle({"task_id": task_id, "answer": answer}, attempt_id))

    for fn in (execute_sql, get_all_models, get_model_details, list_metrics, search_kb, get_kb_document):
        server.add_tool(fn, name=fn.__name__, description=TOOLS[fn.__name__].description, annotations=READ_ONLY,
                        structured_output=False)
    for fn in (next_task, submit_answer):
        server.add_tool(fn, name=fn.__name__, description=FLOW[fn.__name__].description, annotations=FLOW_HINT,
                        structured_output=False)

    @server.prompt(name=NEXT, title="Next benchmark task",
                   description="Hands out the next task (as the next_task tool does), with how to work on it.")
    def next_task_prompt() -> str:
        reply = run.call(NEXT, {}, _caller.get())
        if reply.error:
            return reply.text
        handed = json.loads(reply.text)
        if "task_id" not in handed:
            return handed["message"]
        return (f"{run.instructions}\n\nTask {handed['task_id']} (attempt {handed['attempt']} of {handed['epochs']}):"
                f"\n\n{run.task_prompt(run.tasks[handed['task_id']])}\n\nWhen you know the answer, call "
                f"submit_answer(task_id=\"{handed['task_id']}\", attempt_id=\"{handed[HANDLE]}\", answer=...).")

    return server


class _Recorder:
    """Records the tools/call requests no tool saw (refused by the SDK's argument check, or an unknown tool)."""

    def __init__(self, run: ServedRun):
        self.run = run

    async def __call__(self, ctx, call_next):
        caller = _caller.set(_caller_of(ctx))
        try:
            if ctx.method == REFUSED:  # a request the SDK could not read (see stdio_screen): answered, recorded
                reason = str((ctx.params or {}).get("reason"))
                self.run.record(str((ctx.params or {}).get("tool") or "(unreadable request)"), None,
                                failed(reason), 0.0, _caller.get())
                raise MCPError(INVALID_PARAMS, reason)
            if ctx.method != "tools/call":
                return await call_next(ctx)
            return await self._tool_call(ctx, call_next)
        finally:
            _caller.reset(caller)

    async def _tool_call(self, ctx, call_next):
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
        self.run.record(str(params.get("name")), params.get("arguments"), reply, time.monotonic() - start,
                        _caller.get())


def _caller_of(ctx) -> str | None:
    """Who makes a request: its MCP session over HTTP; None over stdio (the server process's one client)."""
    headers = getattr(getattr(ctx, "request", None), "headers", None)
    if headers is None:
        return None
    session = headers.get("mcp-session-id")
    return f"{HTTP_SESSION}{session}" if session else f"http-request:{uuid.uuid4().hex}"


def _reply_of(result: Any) -> Reply:
    data = result.model_dump(by_alias=True) if hasattr(result, "model_dump") else result or {}
    text = "\n".join(c.get("text", "") for c in data.get("content") or [] if isinstance(c, dict))
    return Reply(text, bool(data.get("isError") or data.get("is_error")))


def serve(run: ServedRun, *, http: bool = False, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve over stdio (until the client closes it) or streamable HTTP at http://HOST:PORT/mcp (until interrupted)."""
    server = build_server(run)
    run.on_stale = _interrupt_soon if http else (lambda _: _exit_soon(run))
    if http:
        server.run("streamable-http", host=host, port=port)
    else:
        anyio.run(_serve_stdio, server)


async def _serve_stdio(server: MCPServer) -> None:
    """MCPServer.run("stdio"), reading stdin through the screen (the SDK takes no reader of its own otherwise)."""
    lines = anyio.wrap_file(io.TextIOWrapper(os.fdopen(os.dup(0), "rb"), encoding="utf-8",
                                             errors="replace"))
    async with stdio_server(stdin=ScreenedLines(lines)) as (read, write):
        lowlevel = server._lowlevel_server  # noqa: SLF001 - what run_stdio_async runs, given our reader
        await lowlevel.run(read, write, lowlevel.create_initialization_options())


def stopped(run: ServedRun) -> str:
    """The line that says why a server stopped on a bundle replaced under it (for its user, not its agent)."""
    return (f"{run.env.bundle}: {(run.stale or '').split(';')[0]}; the server stopped ({run.progress()}); the run "
            f"in {run.out} stays as it was")


def _interrupt_soon(_why: str) -> None:
    """Stop the HTTP server once the reply that says why has gone out, as Ctrl-C would (the CLI then says why)."""
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()


def _exit_soon(run: ServedRun) -> None:
    """Stop the stdio server once the reply that says why has gone out. Not by Ctrl-C: the SDK's stdin reader
    blocks in a thread until the client closes stdin. Every record is complete by then (each is written under
    the folder's lock before its reply), so the process ends here, its SQL workers stopped."""

    def end() -> None:
        sys.stderr.write(f"error: {stopped(run)}\n")
        sys.stderr.flush()
        run.close()
        run.env.close()
        os._exit(1)

    threading.Timer(0.3, end).start()
