"""The built-in agent of `dptool eval`: an Ollama chat loop with two tools, run_sql and search_kb (the knowledge
base of the task's domain, kb/<domain>/).

As in DI-Bench §4.1: the schema in the system prompt, temperature 0 (the client's default), at most
20 turns (LLM calls) per task, the answer taken from <answer>…</answer>. Conditions as in Table 5:
standard; oracle (the task's rule documents are given with the question); no-rule (the metric
catalog only, scored against the task's `base` answer).

A run answers each task `epochs` times (attempts 1..k, every task's attempt 1 before any attempt 2) and writes
OUT/answers.jsonl one attempt at a time, after that attempt's transcript; a run that was interrupted and started
again skips the (task, attempt) pairs already in the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from string import Template

from dptool.errors import DptoolError
from dptool.evaluate.kb import KnowledgeBase, domain_folder
from dptool.evaluate.sandbox import DEFAULT_MAX_ROWS, DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT, Sandbox
from dptool.evaluate.score import load_tasks
from dptool.evaluate.select import Selection
from dptool.files.jsontext import line
from dptool.files.names import file_name, transcript_name
from dptool.llm.client import LLM, PROMPTS
from dptool.outdir import write_text_atomic

PROMPT_VERSION = "v1"
CONDITIONS = ("standard", "oracle", "no-rule")
MAX_TURNS = 20
MAX_TURNS_RANGE = (1, 100)  # what --max-turns (and the inspect task's max_turns) accepts
RULE_TIER = "knowledge+analytics+rule"
STAGE = "eval"
# answer formats whose numbers are the metric's own, so a percent metric gives shares
PERCENT_TYPES = ("value", "ranking", "threshold", "comparison", "breakdown")
TOOLS = [
    {"type": "function", "function": {
        "name": "run_sql",
        "description": "Run one read-only DuckDB query (SELECT or WITH) on the warehouse; returns rows as text.",
        "parameters": {"type": "object", "properties": {
            "sql": {"type": "string", "description": "One SELECT or WITH query; tables as schema.table."}},
            "required": ["sql"]}}},
    {"type": "function", "function": {
        "name": "search_kb",
        "description": "Search the knowledge base (metric catalog and business-rule documents).",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "Words to look for, e.g. a metric or a rule topic."}},
            "required": ["query"]}}},
]
_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|\Z)", re.DOTALL | re.IGNORECASE)


def load_prompts(version: str = PROMPT_VERSION) -> dict:
    """The prompt file dptool/llm/prompts/agent_<version>.toml."""
    path = PROMPTS / f"agent_{version}.toml"
    if not path.is_file():
        raise DptoolError(f"{path}: prompt version {version!r} not found")
    return tomllib.loads(path.read_text(encoding="utf-8"))


def extract_answer(content: str) -> str | None:
    """The text inside the last <answer>…</answer> of a reply (an unclosed tag runs to the end)."""
    found = _ANSWER.findall(content or "")
    return found[-1].strip() if found else None


def format_hint(task: dict, prompts: dict) -> str:
    """What the answer must look like, from the task's answer_format."""
    fmt = task.get("answer_format") or {}
    template = prompts["formats"].get(fmt.get("type"), prompts["formats"]["value"])
    hint = Template(template).safe_substitute(key=fmt.get("key", "group"), k=fmt.get("k", ""))
    if fmt.get("format") == "percent" and fmt.get("type") in PERCENT_TYPES:
        hint += prompts["formats"]["percent"]
    return hint


@dataclass(frozen=True)
class Settings:
    """Everything that makes two runs comparable; a resumed run must use the same."""

    model: str
    condition: str = "standard"
    max_turns: int = MAX_TURNS
    sql_timeout: float = DEFAULT_TIMEOUT
    sql_memory_mb: int = DEFAULT_MEMORY_MB
    max_rows: int = DEFAULT_MAX_ROWS
    prompt_version: str = PROMPT_VERSION
    tasks_sha256: str = ""  # the bundle's fingerprint (dptool.bundle)
    selection: dict = field(default_factory=lambda: Selection().as_dict())
    epochs: int = 1  # attempts per task
    source: str = "eval"  # what wrote the run (the run-folder contract: eval, serve or inspect)


class Agent:
    """One model, one bundle, one condition: `solve(task)` returns the task's transcript."""

    def __init__(self, llm: LLM, bundle: str | Path, settings: Settings):
        if settings.condition not in CONDITIONS:
            raise DptoolError(f"--condition {settings.condition!r}: expected one of {', '.join(CONDITIONS)}")
        self.llm = llm
        self.bundle = Path(bundle)
        self.settings = settings
        self.prompts = load_prompts(settings.prompt_version)
        self.sandbox = Sandbox(self.bundle / "warehouse.duckdb", timeout=settings.sql_timeout,
                               max_rows=settings.max_rows, memory_mb=settings.sql_memory_mb)
        no_rule = settings.condition == "no-rule"
        self._kb_only = ("metrics.md",) if no_rule else None
        self._kbs: dict[Path, KnowledgeBase] = {}
        self.kb: KnowledgeBase | None = None  # the open task's domain's (see solve)
        self.system = Template(self.prompts["system"]).substitute(
            max_rows=settings.max_rows, schema=self.sandbox.schema(),
            condition=self.prompts["conditions"][settings.condition].strip(),
            kb_rules="" if no_rule else " and the company's rule documents")

    def close(self) -> None:
        self.sandbox.close()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def kb_of(self, task: dict) -> KnowledgeBase:
        """The knowledge base of the task's domain (kb/<domain>/), read once per domain."""
        folder = domain_folder(self.bundle / "kb", task.get("domain"))
        if folder not in self._kbs:
            self._kbs[folder] = KnowledgeBase(folder, only=self._kb_only)
        return self._kbs[folder]

    def task_prompt(self, task: dict) -> str:
        """The user message of a task: the question, the rule documents (oracle) and the answer format."""
        rules = ""
        if self.settings.condition == "oracle" and task.get("rule_ids"):
            folder = domain_folder(self.bundle / "kb", task.get("domain"))
            docs = [(folder / "rules" / f"{file_name(r)}.md") for r in task["rule_ids"]]  # a rule id is no path
            missing = [str(d) for d in docs if not d.is_file()]
            if missing:
                raise DptoolError(f"{missing[0]}: rule document of {task['task_id']} not found (oracle condition)")
            text = "\n\n---\n\n".join(d.read_text(encoding="utf-8").strip() for d in docs)
            rules = Template(self.prompts["oracle_rules"]).substitute(documents=text)
        return Template(self.prompts["task"]).substitute(question=task["question"], rules=rules,
                                                         format=format_hint(task, self.prompts))

    def call_tool(self, name: str, arguments: dict) -> str:
        """A tool's output as the agent sees it; errors are text starting with "error:", never raised.

        Only DptoolError passes (the warehouse cannot be opened at all): the run stops, resumable, with one line.
        """
        try:
            return self._call_tool(name, arguments)
        except DptoolError:
            raise
        except Exception as exc:  # noqa: BLE001 - a tool's failure is the agent's to see, never a crash of the run
            return f"error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"

    def _call_tool(self, name: str, arguments: dict) -> str:
        if not isinstance(arguments, dict):
            return f"error: the arguments of {name} must be a JSON object"
        if name == "run_sql":
            sql = arguments.get("sql")
            return self.sandbox.run(sql) if isinstance(sql, str) else "error: run_sql needs a 'sql' string argument"
        if name == "search_kb":
            query = arguments.get("query")
            if self.kb is None:
                return "error: search_kb reads the knowledge base of a task's domain, and no task is open"
            return self.kb.run(query) if isinstance(query, str) else \
                "error: search_kb needs a 'query' string argument"
        return f"error: unknown tool {name!r}; the tools are run_sql and search_kb"

    def solve(self, task: dict) -> dict:
        """Run the loop on one task: at most max_turns LLM calls, stopping at the first <answer>."""
        messages = [{"role": "system", "content": self.system},
                    {"role": "user", "content": self.task_prompt(task)}]
        self.sandbox.new_session()  # nothing a query of the last task did is seen by this one
        self.kb = self.kb_of(task)  # search_kb reads the task's own domain: another's policies are not its
        answer, stop, turns, tool_calls, sql_errors, invalid_text = None, "max_turns", 0, 0, 0, 0
        started = time.monotonic()
        before = self.llm.usage.get(STAGE)
        tokens_before = (before.prompt_tokens, before.completion_tokens) if before else (0, 0)
        max_turns = self.settings.max_turns
        for turn in range(1, max_turns + 1):
            if turn == max_turns and turn > 1:
                messages.append({"role": "user", "content": self.prompts["last_turn"]})
            reply, bad = valid_unicode(self.llm.chat(messages, stage=STAGE, tools=TOOLS))
            invalid_text += bad
            turns = turn
            message = {"role": "assistant", "content": reply["content"]}
            if reply["tool_calls"]:
                message["tool_calls"] = [{"function": {"name": c["name"], "arguments": c["arguments"]}}
                                         for c in reply["tool_calls"]]
            messages.append(message)
            answer = extract_answer(reply["content"])
            if answer is not None:
                stop = "answer"
                break
            if not reply["tool_calls"]:
                messages.append({"role": "user", "content": self.prompts["nudge"]})
                continue
            for call in reply["tool_calls"]:
                tool_calls += 1
                output = self.call_tool(call["name"], call["arguments"] or {})
                sql_errors += call["name"] == "run_sql" and output.startswith("error:")
                messages.append({"role": "tool", "tool_name": call["name"], "content": output})
        usage = self.llm.usage[STAGE]
        return {"task_id": task["task_id"], "model": self.settings.model, "condition": self.settings.condition,
                "prompt_version": self.settings.prompt_version, "answer": answer, "stop": stop, "turns": turns,
                "tool_calls": tool_calls, "sql_errors": sql_errors, "seconds": round(time.monotonic() - started, 3),
                "prompt_tokens": usage.prompt_tokens - tokens_before[0],
                "completion_tokens": usage.completion_tokens - tokens_before[1], "messages": messages,
                **({"invalid_text": invalid_text} if invalid_text else {})}


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def valid_unicode(value):
    """`value` (a model's reply: str, list, dict) with every lone surrogate (JSON's `\\ud83d` half of a pair: no
    character, not encodable) replaced by U+FFFD, and how many were replaced."""
    if isinstance(value, str):
        fixed, n = _SURROGATE.subn("\ufffd", value)
        return fixed, n
    if isinstance(value, list):
        pairs = [valid_unicode(v) for v in value]
        return [v for v, _ in pairs], sum(n for _, n in pairs)
    if isinstance(value, dict):
        pairs = {valid_unicode(k)[0]: valid_unicode(v) for k, v in value.items()}
        keys = sum(valid_unicode(k)[1] for k in value)
        return {k: v for k, (v, _) in pairs.items()}, keys + sum(n for _, n in pairs.values())
    return value, 0


# ---------------------------------------------------------------------------------------------------
# a resumable run


def tasks_digest(bundle: str | Path) -> str:
    """sha256 of the bundle's tasks.jsonl: a resumed run must see the same tasks."""
    return hashlib.sha256((Path(bundle) / "tasks.jsonl").read_bytes()).hexdigest()


def finished_attempts(answers: Path) -> set[tuple[str, int]]:
    """(task id, attempt) pairs already answered in an answers file (no "attempt": 1); a line cut by an
    interruption does not count."""
    done = set()
    if answers.is_file():
        for line in answers.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
                attempt = record.get("attempt", 1)
                if isinstance(attempt, int) and not isinstance(attempt, bool):
                    done.add((record["task_id"], attempt))
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
                continue
    return done


def finished(answers: Path) -> set[str]:
    """Task ids with at least one attempt answered in an answers file."""
    return {task_id for task_id, _ in finished_attempts(answers)}


def pending(tasks: list[dict], epochs: int, done: set[tuple[str, int]]) -> list[tuple[dict, int]]:
    """The (task, attempt) pairs still to run: every task's attempt 1, then every task's attempt 2, …, so that an
    interrupted run holds whole epochs first."""
    return [(t, a) for a in range(1, epochs + 1) for t in tasks if (t["task_id"], a) not in done]


def prepare_run(out: Path, settings: Settings) -> None:
    """Create OUT/run.json, or check that the run in OUT used the same settings."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "run.json"
    mine = asdict(settings)
    if path.is_file():
        # a setting added since that run was written had its default then
        defaults = {f.name: f.default if f.default is not MISSING else f.default_factory() for f in fields(Settings)
                    if f.default is not MISSING or f.default_factory is not MISSING}
        theirs = {**defaults, **json.loads(path.read_text(encoding="utf-8"))}
        differ = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
        if differ:
            k = differ[0]
            raise DptoolError(f"{out}: holds a run with {k} = {theirs.get(k)!r}, not {mine.get(k)!r}; rerun with "
                              f"the same settings to resume, or choose another --out")
    else:
        write_text_atomic(path, json.dumps(mine, indent=2, sort_keys=True) + "\n")


def append_answer(answers: Path, record: dict) -> None:
    """Append one answer line and flush it to disk: the line is what marks a task as finished."""
    cut = answers.is_file() and answers.stat().st_size > 0 and not answers.read_bytes().endswith(b"\n")
    with open(answers, "a", encoding="utf-8", newline="\n") as f:
        if cut:  # the last run stopped mid-line: start a fresh line
            f.write("\n")
        f.write(line(record))  # NaN as a string, a lone surrogate as its escape: every line stays JSON
        f.flush()
        os.fsync(f.fileno())


RECORDED = ("stop", "turns", "seconds", "tool_calls", "sql_errors", "prompt_tokens", "completion_tokens")


def run_tasks(agent: Agent, attempts: Iterable[tuple[dict, int]], out: Path,
              on_done: Callable[[dict], None] = lambda _: None) -> None:
    """Solve each (task, attempt); save its transcript, then append its answer line."""
    transcripts = out / "transcripts"
    transcripts.mkdir(exist_ok=True)
    for task, attempt in attempts:
        transcript = {**agent.solve(task), "attempt": attempt}
        name = transcript_name(task["task_id"], attempt)  # a task id is data: never a path
        write_text_atomic(transcripts / name, json.dumps(transcript, indent=2, sort_keys=True, ensure_ascii=False)
                      + "\n")
        append_answer(out / "answers.jsonl", {
            "task_id": task["task_id"], "attempt": attempt, "bundle": agent.settings.tasks_sha256,
            "answer": transcript["answer"], "transcript": f"transcripts/{name}",
            **{k: transcript[k] for k in RECORDED}})
        on_done(transcript)


def select_tasks(bundle: str | Path, condition: str, selection: Selection | None = None) -> list[dict]:
    """The tasks a run answers: those selected (default all) of the condition's: every task (standard), or the
    rule-grounded analytics tasks (oracle, no-rule).

    As in DI-Bench's Table 5, the oracle and no-rule conditions are measured on the tasks whose computation
    a rule modifies; a knowledge task would be given away by the oracle and unanswerable without the rules.
    """
    tasks = load_tasks(bundle)
    if condition != "standard":
        tasks = [t for t in tasks if t.get("tier") == RULE_TIER]
    return (selection or Selection()).apply(tasks)
