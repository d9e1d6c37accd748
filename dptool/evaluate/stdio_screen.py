"""Requests on stdio the MCP SDK would drop without a reply, turned into requests it answers with an error.

The SDK's stdio reader drops a line it cannot validate (a lone surrogate such as "\\ud800", `"params": [1, 2]`, JSON
nested thousands deep): the client then waits forever. Each such request that has an id is rewritten here into a
request of the method REFUSED whose params say why; the server's middleware answers it with a JSON-RPC error
(over HTTP the SDK answers the same bytes with a 400 itself).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterable, AsyncIterator

REFUSED = "dptool/refused"
MAX_DEPTH = 64  # arrays and objects inside one another in a request; an answer nests a few levels
_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def _depth(value, limit: int) -> int:
    """How deep `value` nests, counted up to just past `limit` (iteratively: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            if deepest > limit:
                return deepest
            stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def _refusal(request_id, reason: str, tool: str | None) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": REFUSED,
                       "params": {"reason": reason, "tool": tool}}) + "\n"


def screen(line: str) -> str:
    """The line as the SDK should read it: unchanged, or a REFUSED request carrying the original's id."""
    try:
        message = json.loads(line)
    except RecursionError:
        found = _ID.search(line[:4096])
        if found is None:
            return line
        return _refusal(json.loads(found.group(1)), f"the request nests deeper than {MAX_DEPTH} levels", None)
    except ValueError:
        return line  # not JSON: the SDK's parse error is its own
    if not isinstance(message, dict) or "method" not in message:
        return line
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return line  # a notification, or an id the SDK refuses anyway
    params = message.get("params")
    tool = params.get("name") if isinstance(params, dict) and isinstance(params.get("name"), str) else None
    if params is not None and not isinstance(params, dict):
        return _refusal(request_id, f"the params of {str(message['method'])[:60]} must be a JSON object, not "
                                    f"{type(params).__name__}", tool)
    if _depth(message, MAX_DEPTH) > MAX_DEPTH:
        return _refusal(request_id, f"the request nests deeper than {MAX_DEPTH} levels", tool)
    try:
        line.encode("utf-8")
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return _refusal(request_id, "the request holds a lone surrogate (an escape such as \\ud800 without its "
                                    "pair), which is no Unicode text", tool)
    return line


class ScreenedLines:
    """The lines of a text stream, each screened."""

    def __init__(self, lines: AsyncIterable[str]):
        self.lines = lines

    def __aiter__(self) -> AsyncIterator[str]:
        return self._screened()

    async def _screened(self) -> AsyncIterator[str]:
        async for line in self.lines:
            yield screen(line)
