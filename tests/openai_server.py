"""A real HTTP server on loopback that speaks the OpenAI chat-completions API with scripted replies (tests only).

    with OpenAIServer(models=("local-model",), api_key="sk-test") as server:
        server.replies.append({"tool_calls": [{"name": "run_sql", "arguments": {"sql": "select 1"}}]})
        server.replies.append({"content": "<answer>3</answer>"})
        server.replies.append({"status": 500})        # an error answer
        OpenAIChat("local-model", server.url)          # server.url ends in /v1

A reply may also be a function of the request body; when the queue is empty, `server.handler` (if set) answers
every further request. A tool call's arguments are sent as the JSON text the API carries (a string given as
`arguments` is sent as it is: a model's malformed JSON). With `api_key` set, a request without `Authorization:
Bearer <api_key>` gets a 401. `models=None` serves no model list (GET /v1/models is a 404, as on some servers).
Every request is recorded in `server.requests` as (method, path, headers, body).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class OpenAIServer:
    def __init__(self, models: tuple[str, ...] | None = ("local-model",), api_key: str | None = None):
        self.models = models
        self.api_key = api_key
        self.replies: list[dict | Callable[[dict], dict]] = []
        self.handler: Callable[[dict], dict] | None = None
        self.requests: list[tuple[str, str, dict, dict | None]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def chat_bodies(self) -> list[dict]:
        return [body for method, path, _, body in self.requests if path == "/v1/chat/completions"]

    def __enter__(self) -> OpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()  # ASCII: a lone surrogate travels as its \\u escape
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _authorized(self) -> bool:
                if server.api_key is None or self.headers.get("Authorization") == f"Bearer {server.api_key}":
                    return True
                self._send(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                           "code": "invalid_api_key"}})
                return False

            def do_GET(self):
                server.requests.append(("GET", self.path, dict(self.headers), None))
                if not self._authorized():
                    return
                if self.path == "/v1/models" and server.models is not None:
                    self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "test"}
                                                                for m in server.models]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                server.requests.append(("POST", self.path, dict(self.headers), body))
                if not self._authorized():
                    return
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": "not found"}})
                    return
                if server.models is not None and body.get("model") not in server.models:
                    self._send(404, {"error": {"message": f"The model `{body.get('model')}` does not exist."}})
                    return
                if not server.replies and server.handler is None:
                    self._send(500, {"error": {"message": "the loopback server has no scripted reply left"}})
                    return
                reply = server.replies.pop(0) if server.replies else server.handler
                if callable(reply):
                    reply = reply(body)
                if reply.get("status", 200) != 200:
                    self._send(reply["status"], {"error": {"message": reply.get("error", "internal error")}})
                    return
                calls = [{"id": f"srv_{i}", "type": "function", "function": {
                    "name": c["name"], "arguments": c["arguments"] if isinstance(c.get("arguments"), str)
                    else json.dumps(c.get("arguments", {}))}} for i, c in enumerate(reply.get("tool_calls", []))]
                message = {"role": "assistant", "content": reply.get("content")}
                if calls:
                    message["tool_calls"] = calls
                self._send(200, {"id": "chatcmpl-loopback", "object": "chat.completion", "created": 0,
                                 "model": body.get("model"),
                                 "choices": [{"index": 0, "message": message,
                                              "finish_reason": "tool_calls" if calls else "stop"}],
                                 "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})

        return Handler
