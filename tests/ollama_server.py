"""A real HTTP server on loopback that speaks Ollama's API with scripted answers (tests only).

    with OllamaServer() as server:
        server.chat_replies.append({"content": "hello"})            # next /api/chat answer
        server.chat_replies.append({"tool_calls": [{"name": "run_sql", "arguments": {"sql": "select 1"}}]})
        server.chat_replies.append({"status": 500})                  # an error answer
        server.chat_replies.append({"delay": 5, "content": "late"})  # answers after 5 s
        llm = LLM("test-model", host=server.url, timeout=1)

A reply may also be a function of the request body. When the queue is empty, `server.chat_handler`
(a function of the request body, if set) answers every further /api/chat request: a script that does not
depend on how many calls are made. Models not in `server.models` get a 404 like a model that is not
pulled. Every request is recorded in `server.requests` as (path, body).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # a client that gave up (a timeout test) closes the socket before a delayed reply: not an error here
        import sys

        if not isinstance(sys.exc_info()[1], BrokenPipeError | ConnectionResetError):
            super().handle_error(request, client_address)


class OllamaServer:
    def __init__(self, models: tuple[str, ...] = ("test-model",), embedding_dim: int = 8):
        self.models = set(models)
        self.embedding_dim = embedding_dim
        self.chat_replies: list[dict | Callable[[dict], dict]] = []
        self.generate_replies: list[dict | Callable[[dict], dict]] = []
        self.chat_handler: Callable[[dict], dict] | None = None
        self.requests: list[tuple[str, dict]] = []
        self._server = _Server(("127.0.0.1", 0), self._handler())
        # a short poll interval: shutdown() waits for it, at the end of every test
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> OllamaServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def embedding(self, text: str) -> list[float]:
        """A deterministic vector from the text's bytes: equal texts, equal vectors."""
        digest = hashlib.sha256(text.encode()).digest()
        return [b / 255 for b in digest[: self.embedding_dim]]

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path == "/api/tags":
                    self._send(200, {"models": [{"name": m, "model": m} for m in sorted(server.models)]})
                elif self.path == "/api/version":
                    self._send(200, {"version": "0.0.0-loopback"})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                server.requests.append((self.path, body))
                model = body.get("model", "")
                if self.path in ("/api/chat", "/api/generate", "/api/embed") and model not in server.models:
                    self._send(404, {"error": f"model '{model}' not found, try pulling it first"})
                    return
                if self.path == "/api/embed":
                    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    self._send(200, {"model": model, "embeddings": [server.embedding(t) for t in texts],
                                     "prompt_eval_count": sum(len(t.split()) for t in texts)})
                    return
                if self.path not in ("/api/chat", "/api/generate"):
                    self._send(404, {"error": "not found"})
                    return
                queue = server.chat_replies if self.path == "/api/chat" else server.generate_replies
                handler = server.chat_handler if self.path == "/api/chat" else None
                if not queue and handler is None:
                    self._send(500, {"error": "the loopback server has no scripted reply left"})
                    return
                reply = queue.pop(0) if queue else handler
                if callable(reply):
                    reply = reply(body)
                time.sleep(reply.get("delay", 0))
                if reply.get("status", 200) != 200:
                    self._send(reply["status"], {"error": reply.get("error", "internal error")})
                    return
                done = {"model": model, "created_at": "2026-01-01T00:00:00Z", "done": True, "done_reason": "stop",
                        "total_duration": 1000, "prompt_eval_count": 10, "eval_count": 5}
                if self.path == "/api/generate":
                    self._send(200, {**done, "response": reply.get("content", "")})
                    return
                calls = [{"function": {"name": c["name"], "arguments": c.get("arguments", {})}}
                         for c in reply.get("tool_calls", [])]
                message = {"role": "assistant", "content": reply.get("content", "")}
                if calls:
                    message["tool_calls"] = calls
                self._send(200, {**done, "message": message})

        return Handler
