"""A chat model behind any OpenAI-compatible chat-completions endpoint (`POST {base}/chat/completions`: OpenAI,
vLLM, llama.cpp's server, LM Studio, Ollama's /v1), with tool calls, for `dptool eval --model openai:MODEL`.

It speaks the built-in agent's side of `dptool.llm.client.LLM` (`chat`, `ensure_model`, `usage`, `name`, `host`):
the agent's messages (Ollama's shape: tool calls without ids, tool replies by name) become the endpoint's (each
tool call given an id, each tool reply the id of its call, in order), and the reply comes back as
{"content": str, "tool_calls": [{"name": str, "arguments": dict | str}]}. Requests run at temperature 0 with a
fixed seed; the key, if any, comes from an environment variable, never from the command line.
"""

from __future__ import annotations

import json
import os
import time

from dptool.llm.client import DEFAULT_OPTIONS, LLMError, Usage

DEFAULT_BASE_URL = "https://api.openai.com/v1"
ENV_BASE_URL = "OPENAI_BASE_URL"
ENV_API_KEY = "OPENAI_API_KEY"


class OpenAIChat:
    """`model` served at `base_url` (default $OPENAI_BASE_URL, then OpenAI's); the key read from `$api_key_env`."""

    def __init__(self, model: str, base_url: str | None = None, *, api_key_env: str = ENV_API_KEY,
                 timeout: float = 120.0, retries: int = 2, backoff: float = 0.5):
        self.model = model
        self.host = (base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL).rstrip("/")
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.usage: dict[str, Usage] = {}
        key = os.environ.get(api_key_env, "").strip()
        # a local server needs no key: the header is sent only when there is one
        self._headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    def ensure_model(self) -> None:
        """Fail early, in one line, when the endpoint is unreachable, refuses the key, or does not serve the model.
        An endpoint without a model list (404) is taken at its word."""
        status, body = self._request("GET", "/models", None, "check")
        if status == 404:
            return
        ids = [m.get("id") for m in (body.get("data") or []) if isinstance(m, dict)] if isinstance(body, dict) else []
        if ids and self.model not in ids:
            shown = ", ".join(sorted(map(str, ids))[:5]) + (" …" if len(ids) > 5 else "")
            raise LLMError(f"{self.name} at {self.host}: the endpoint does not serve model {self.model!r} "
                           f"(it serves {shown})")

    def chat(self, messages: list[dict], *, stage: str, tools: list[dict] | None = None) -> dict:
        """One chat turn: {"content": str, "tool_calls": [{"name": str, "arguments": dict | str}]}."""
        usage = self.usage.setdefault(stage, Usage())
        request = {"model": self.model, "messages": wire_messages(messages),
                   "temperature": DEFAULT_OPTIONS["temperature"], "seed": DEFAULT_OPTIONS["seed"]}
        if tools:
            request["tools"] = tools
        start = time.perf_counter()
        _, body = self._request("POST", "/chat/completions", request, stage)
        usage.seconds += time.perf_counter() - start
        usage.calls += 1
        counted = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        usage.prompt_tokens += _count(counted.get("prompt_tokens"))
        usage.completion_tokens += _count(counted.get("completion_tokens"))
        return self._reply(body, stage)

    def _reply(self, body: dict, stage: str) -> dict:
        choices = body.get("choices")
        message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(
            choices[0], dict) else None
        if not isinstance(message, dict):
            raise LLMError(f"{self.name} at {self.host}: a reply without choices[0].message in stage {stage}")
        calls = []
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                continue  # not a function call: nothing the agent can run
            raw = function.get("arguments")
            try:  # arguments are a JSON string; a model may write one that is not: the agent tells it so
                arguments = json.loads(raw) if isinstance(raw, str) else raw if raw is not None else {}
            except ValueError:
                arguments = raw
            calls.append({"name": function["name"], "arguments": arguments})
        content = message.get("content")
        return {"content": content if isinstance(content, str) else "", "tool_calls": calls}

    def _request(self, method: str, path: str, payload: dict | None, stage: str) -> tuple[int, dict]:
        """(status, JSON body) of one request, retried on 5xx, 429 and timeouts; a 404 on GET is returned, any
        other failure is one LLMError line."""
        import httpx

        # ASCII JSON: whatever text the conversation holds, the request can be encoded
        data = json.dumps(payload).encode("ascii") if payload is not None else None
        for attempt in range(self.retries + 1):
            try:
                response = httpx.request(method, self.host + path, content=data, headers=self._headers,
                                         timeout=self.timeout)
            except httpx.TimeoutException:
                if attempt == self.retries:
                    raise LLMError(f"{self.name} at {self.host}: no answer within {self.timeout:g} s in stage "
                                   f"{stage} ({self.retries + 1} tries)") from None
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                raise LLMError(f"cannot reach {self.host} ({type(exc).__name__}); start the server or give the "
                               "right --base-url") from None
            else:
                status = response.status_code
                if status < 400 or (status == 404 and method == "GET"):
                    try:
                        return status, response.json() if status < 400 else {}
                    except ValueError:
                        raise LLMError(f"{self.name} at {self.host}{path}: the reply is not JSON "
                                       f"(HTTP {status}); is this an OpenAI-compatible endpoint?") from None
                if status in (401, 403):
                    where = f"${self.api_key_env}" if self._has_key else f"${self.api_key_env} is not set"
                    raise LLMError(f"{self.name} at {self.host}: HTTP {status}, the key was refused ({where})")
                if (status < 500 and status != 429) or attempt == self.retries:  # 429: too many requests, wait
                    raise LLMError(f"{self.name} at {self.host}{path}: HTTP {status} in stage {stage}: "
                                   f"{_error_text(response)}")
            time.sleep(self.backoff * 2**attempt)
        raise AssertionError("unreachable")

    @property
    def _has_key(self) -> bool:
        return "Authorization" in self._headers


def wire_messages(messages: list[dict]) -> list[dict]:
    """The agent's messages in chat-completions' shape: call ids given in order, each tool reply its call's id."""
    wire, waiting, n = [], [], 0
    for message in messages:
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                n += 1
                function = call.get("function", call)
                arguments = function.get("arguments")
                calls.append({"id": f"call_{n}", "type": "function", "function": {
                    "name": function.get("name"),
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments or {})}})
                waiting.append(f"call_{n}")
            wire.append({"role": "assistant", "content": message.get("content") or None, "tool_calls": calls})
        elif role == "tool":
            # a reply with no call waiting cannot happen in the agent's loop; the id then names no call
            wire.append({"role": "tool", "tool_call_id": waiting.pop(0) if waiting else f"call_{n}",
                         "content": message.get("content", "")})
        else:
            wire.append({"role": role, "content": message.get("content", "")})
    return wire


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _error_text(response) -> str:
    """The server's own error message, on one line."""
    try:
        body = response.json()
        error = body.get("error") if isinstance(body, dict) else None
        text = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else body
    except ValueError:
        text = response.text
    return " ".join(str(text).split())[:200]
