"""The one LLM client: Ollama's chat and embed APIs through the `ollama` package.

Every LLM stage is optional. Requests run at temperature 0 with a fixed seed, and each response is
cached on disk under a key of (model, request): a rerun with the same inputs makes no call and gives
the same bytes. Calls, tokens, seconds and cache hits are counted per stage.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from dptool.errors import DptoolError

DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_OPTIONS = {"temperature": 0, "seed": 42}


class LLMError(DptoolError):
    """The model could not give a usable answer (after retries, where retrying helps)."""


@dataclass
class Usage:
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


class LLM:
    """A model served by Ollama. `spec` is `ollama:NAME`, e.g. `ollama:qwen2.5:7b`."""

    def __init__(self, model: str, host: str | None = None, *, timeout: float = 120.0, retries: int = 2,
                 backoff: float = 0.5, cache_dir: str | Path | None = None, options: dict | None = None):
        import ollama

        self.model = model
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.options = {**DEFAULT_OPTIONS, **(options or {})}
        self.usage: dict[str, Usage] = {}
        self._client = ollama.Client(host=self.host, timeout=timeout)

    @classmethod
    def from_spec(cls, spec: str, **kwargs) -> LLM:
        provider, _, model = spec.partition(":")
        if provider != "ollama" or not model:
            raise DptoolError(f"--llm {spec!r}: expected ollama:MODEL, e.g. ollama:qwen2.5:7b")
        return cls(model, **kwargs)

    @property
    def name(self) -> str:
        return f"ollama:{self.model}"

    def chat(self, messages: list[dict], *, stage: str, tools: list[dict] | None = None,
             json_format: bool = False) -> dict:
        """One chat turn: {"content": str, "tool_calls": [{"name": str, "arguments": dict}]}."""
        request = {"messages": messages, "tools": tools or [], "format": "json" if json_format else "",
                   "options": self.options}

        def call() -> tuple[dict, int, int]:
            response = self._client.chat(model=self.model, messages=messages, tools=tools or None,
                                         format="json" if json_format else None, options=self.options)
            message = response.message
            calls = [{"name": c.function.name, "arguments": dict(c.function.arguments or {})}
                     for c in (message.tool_calls or [])]
            return ({"content": message.content or "", "tool_calls": calls},
                    response.prompt_eval_count or 0, response.eval_count or 0)

        return self._cached("chat", request, stage, call)

    def chat_json(self, messages: list[dict], *, stage: str) -> dict:
        """A chat turn whose content must be one JSON object; malformed JSON is asked for again."""
        last = ""
        for attempt in range(self.retries + 1):
            reply = self.chat(messages if attempt == 0 else [*messages, {"role": "user", "content":
                              "Your last reply was not one valid JSON object. Reply with JSON only."}],
                              stage=stage, json_format=True)
            last = reply["content"]
            try:
                value = json.loads(last)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
        raise LLMError(f"{self.name} at {self.host}: no valid JSON object after {self.retries + 1} tries "
                       f"(stage {stage}; last reply {last[:80]!r})")

    def embed(self, texts: list[str], *, stage: str) -> list[list[float]]:
        """Embeddings of texts, one vector each."""
        request = {"input": texts, "options": self.options}

        def call() -> tuple[list[list[float]], int, int]:
            response = self._client.embed(model=self.model, input=texts)
            return [list(map(float, v)) for v in response.embeddings], response.prompt_eval_count or 0, 0

        return self._cached("embed", request, stage, call)

    def usage_table(self) -> dict[str, dict]:
        return {stage: asdict(u) for stage, u in sorted(self.usage.items())}

    def _cached(self, kind: str, request: dict, stage: str, call):
        usage = self.usage.setdefault(stage, Usage())
        key = hashlib.sha256(json.dumps([self.model, kind, request], sort_keys=True).encode()).hexdigest()
        path = self.cache_dir / f"{key}.json" if self.cache_dir else None
        if path and path.is_file():
            usage.cache_hits += 1
            return json.loads(path.read_text(encoding="utf-8"))
        start = time.perf_counter()
        result, prompt_tokens, completion_tokens = self._with_retries(call, stage)
        usage.calls += 1
        usage.prompt_tokens += prompt_tokens
        usage.completion_tokens += completion_tokens
        usage.seconds += time.perf_counter() - start
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(result, sort_keys=True), encoding="utf-8")
            tmp.replace(path)
        return result

    def _with_retries(self, call, stage: str):
        import httpx
        import ollama

        for attempt in range(self.retries + 1):
            try:
                return call()
            except ollama.ResponseError as exc:
                if exc.status_code == 404:
                    raise LLMError(f"{self.name} at {self.host}: model {self.model!r} is not pulled; "
                                   f"run `ollama pull {self.model}`") from None
                if exc.status_code < 500 or attempt == self.retries:
                    raise LLMError(f"{self.name} at {self.host}: HTTP {exc.status_code} in stage {stage}: "
                                   f"{' '.join(str(exc.error).split())[:200]}") from None
            except httpx.TimeoutException:
                if attempt == self.retries:
                    raise LLMError(f"{self.name} at {self.host}: no answer within {self.timeout:g} s in stage "
                                   f"{stage} ({self.retries + 1} tries)") from None
            except (httpx.ConnectError, ConnectionError):
                raise LLMError(f"cannot reach ollama at {self.host}; start `ollama serve` or set OLLAMA_HOST") \
                    from None
            time.sleep(self.backoff * 2**attempt)
        raise AssertionError("unreachable")
