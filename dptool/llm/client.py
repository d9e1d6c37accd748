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
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from dptool.errors import DptoolError

DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_OPTIONS = {"temperature": 0, "seed": 42}
ENV_MODEL = "DPTOOL_LLM"
CACHE_DIR = Path("target") / "dptool_llm_cache"
PROMPTS = Path(__file__).parent / "prompts"


class LLMError(DptoolError):
    """The model could not give a usable answer (after retries, where retrying helps)."""


@dataclass
class Usage:
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    # tokens of replies served from the cache (as counted when they were made): with these, a rerun from
    # the cache reports the same requests and tokens as the run that filled it
    replayed_prompt_tokens: int = 0
    replayed_completion_tokens: int = 0

    @property
    def requests(self) -> int:
        """Replies used: calls made plus cache hits."""
        return self.calls + self.cache_hits

    @property
    def tokens(self) -> tuple[int, int]:
        """(prompt, completion) tokens of every reply used, made now or replayed from the cache."""
        return (self.prompt_tokens + self.replayed_prompt_tokens,
                self.completion_tokens + self.replayed_completion_tokens)


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

    def chat_json(self, messages: list[dict], *, stage: str,
                  check: Callable[[dict], str | None] | None = None) -> dict:
        """A chat turn whose content must be one JSON object; malformed JSON is asked for again.

        `check` returns what is wrong with a parsed object (None when it is usable); such a reply is
        asked for again too, with the problem named, within the same bounded number of tries.
        """
        last, problem = "", None
        for attempt in range(self.retries + 1):
            if attempt == 0:
                asked = messages
            elif problem is None:
                asked = [*messages, {"role": "user", "content":
                                     "Your last reply was not one valid JSON object. Reply with JSON only."}]
            else:
                asked = [*messages, {"role": "assistant", "content": last},
                         {"role": "user", "content": f"Your last reply does not follow the requested format: "
                                                     f"{problem}. Reply with the corrected JSON object only."}]
            reply = self.chat(asked, stage=stage, json_format=True)
            last, problem = reply["content"], None
            try:
                value = json.loads(last)
            except json.JSONDecodeError:
                continue
            if not isinstance(value, dict):
                continue
            problem = check(value) if check else None
            if problem is None:
                return value
        if problem is not None:
            raise LLMError(f"{self.name} at {self.host}: reply does not follow the requested format after "
                           f"{self.retries + 1} tries (stage {stage}: {problem})")
        raise LLMError(f"{self.name} at {self.host}: no valid JSON object after {self.retries + 1} tries "
                       f"(stage {stage}; last reply {last[:80]!r})")

    def ensure_model(self) -> None:
        """Fail early, in one line, when the server is unreachable or the model is not pulled."""
        listing = self._with_retries(self._client.list, "check")
        names = {m.model for m in listing.models if m.model}
        if self.model not in names and f"{self.model}:latest" not in names:
            raise LLMError(f"{self.name} at {self.host}: model {self.model!r} is not pulled; "
                           f"run `ollama pull {self.model}`")

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
            stored = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(stored, dict) and stored.get(_CACHE_MARK) == 1:
                usage.replayed_prompt_tokens += stored.get("prompt_tokens", 0)
                usage.replayed_completion_tokens += stored.get("completion_tokens", 0)
                return stored["result"]
            return stored  # written before tokens were kept with the reply
        start = time.perf_counter()
        result, prompt_tokens, completion_tokens = self._with_retries(call, stage)
        usage.calls += 1
        usage.prompt_tokens += prompt_tokens
        usage.completion_tokens += completion_tokens
        usage.seconds += time.perf_counter() - start
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            entry = {_CACHE_MARK: 1, "result": result, "prompt_tokens": prompt_tokens,
                     "completion_tokens": completion_tokens}
            tmp.write_text(json.dumps(entry, sort_keys=True), encoding="utf-8")
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


_CACHE_MARK = "dptool_llm_cache"


def resolve_spec(flag: str | None, project_dir: str | Path | None = None) -> tuple[str | None, str]:
    """The model spec to use and where it came from: the flag, $DPTOOL_LLM, or dbt_project.yml.

    dbt_project.yml may set `vars: {dptool: {llm: "ollama:qwen2.5:7b"}}`. `none` (or an empty value)
    at any level turns the LLM stages off. Returns (None, "") when no LLM is configured.
    """
    if flag is not None:
        return _spec_or_none(flag), "--llm"
    if os.environ.get(ENV_MODEL) is not None:
        return _spec_or_none(os.environ[ENV_MODEL]), f"${ENV_MODEL}"
    if project_dir is not None:
        path = Path(project_dir) / "dbt_project.yml"
        if path.is_file():
            import yaml

            try:
                config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            except yaml.YAMLError as exc:
                raise DptoolError(f"{path}: not valid YAML ({' '.join(str(exc).split())[:160]})") from None
            dptool_vars = (config.get("vars") or {}).get("dptool") if isinstance(config, dict) else None
            if isinstance(dptool_vars, dict) and dptool_vars.get("llm") is not None:
                return _spec_or_none(str(dptool_vars["llm"])), f"{path.name} vars.dptool.llm"
    return None, ""


def _spec_or_none(value: str) -> str | None:
    value = value.strip()
    return None if value.lower() in ("", "none", "off") else value


def project_llm(spec: str, project_dir: str | Path, host: str | None = None, timeout: float = 300.0,
                options: dict | None = None) -> LLM:
    """The client of a stage run inside a dbt project: replies cached under target/dptool_llm_cache/."""
    return LLM.from_spec(spec, host=host, timeout=timeout, cache_dir=Path(project_dir).resolve() / CACHE_DIR,
                         options=options)


@dataclass(frozen=True)
class Prompt:
    """A versioned prompt file dptool/llm/prompts/<name>_v<version>.toml (string.Template placeholders)."""

    name: str
    version: str
    texts: dict

    @property
    def label(self) -> str:
        return f"{self.name}_v{self.version}"

    def render(self, part: str, **values) -> str:
        from string import Template

        return Template(self.texts[part]).substitute(**values)


def load_prompt(name: str, version: str = "1") -> Prompt:
    """The prompt file of a stage; its `name` and `version` keys must match the file name."""
    path = PROMPTS / f"{name}_v{version}.toml"
    if not path.is_file():
        raise DptoolError(f"{path}: prompt {name!r} version {version!r} not found")
    texts = tomllib.loads(path.read_text(encoding="utf-8"))
    if texts.get("name") != name or str(texts.get("version")) != version:
        raise DptoolError(f"{path}: declares name {texts.get('name')!r} version {texts.get('version')!r}, "
                          f"expected {name!r} version {version!r}")
    return Prompt(name, version, texts)
