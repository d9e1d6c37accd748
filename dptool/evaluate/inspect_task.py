"""dptool's benchmark as an inspect-ai task (`pip install 'dbt-dptool[inspect]'`), for any model inspect can call.

    inspect eval dptool/benchmark -T bundle=BUNDLE --model openai/gpt-4o [-T type=ranking -T sample=50] --epochs 3

A sample is a task: its input the question and answer format (the words `dptool serve` hands out), its target the
gold answer (the scorer's, never shown to the model). The setup solver opens the bundle's environment for the sample
(dptool.evaluate.environment: the same tools over the same sandbox as `dptool serve`) and gives the model its tools
and a system message; the default solver is inspect's generate loop, and `--solver` may replace it, the tools
staying. A sample has `dptool eval`'s turn budget (20 model turns; `-T max_turns=N` or inspect's `--turn-limit`
overrides it). The scorer is dptool's own comparison (`dptool.answers.compare`), its reason the score's explanation;
a sample that ended on a limit (turns, messages, tokens, time) has no answer, whatever its last reply said.
`dptool inspect-import LOG --out RUN` turns the log into a run folder `dptool score` reads (attempt = epoch).
"""

from __future__ import annotations

import json
from pathlib import Path
from string import Template

import anyio
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.event import SampleLimitEvent
from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageSystem
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import Generate, TaskState, generate, solver
from inspect_ai.tool import Tool, ToolDef, ToolError

from dptool.answers import compare
from dptool.bundle import fingerprint
from dptool.evaluate.agent import MAX_TURNS, MAX_TURNS_RANGE, extract_answer, format_hint
from dptool.evaluate.environment import (
    PROMPT_VERSION,
    TOOLS,
    Environment,
    Knowledge,
    Limits,
    load_environment_prompts,
    schema_of,
)
from dptool.evaluate.limits import EPOCHS, out_of_range
from dptool.evaluate.sandbox import DEFAULT_MAX_ROWS, DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT
from dptool.evaluate.score import load_tasks
from dptool.evaluate.select import Selection, read_ids

# the environment of each running sample, by the sample's uuid: opened by the setup solver, closed by the cleanup
_OPEN: dict[str, Environment] = {}


def _task_name() -> str:
    """The name that makes the task `dptool/benchmark` in inspect's registry. inspect puts a task under its package's
    name by itself where the package lies in site-packages (a wheel's install); an editable install it recognises
    only by a distribution named like the package, and dptool's distribution is dbt-dptool: there the task names
    its package itself."""
    import site
    import sys

    here = __file__.lower()
    places = [*site.getsitepackages(), site.getusersitepackages(), *(p for p in sys.path if "site-packages" in p)]
    return "benchmark" if any(here.startswith(p.lower()) for p in places) else "dptool/benchmark"


def _names(value: str | list | None) -> tuple[str, ...]:
    """A -T value as names: "a,b" or a YAML list (inspect parses -T values as YAML)."""
    if value is None:
        return ()
    values = value if isinstance(value, list) else [value]
    return tuple(dict.fromkeys(v.strip() for item in values for v in str(item).split(",") if v.strip()))


@task(name=_task_name())
def benchmark(bundle: str, tasks: str | None = None, type: str | None = None, domain: str | None = None,
              tier: str | None = None, sample: int | None = None, seed: int = 42, epochs: int = 1,
              sql_timeout: float = DEFAULT_TIMEOUT, sql_memory: int = DEFAULT_MEMORY_MB,
              max_rows: int = DEFAULT_MAX_ROWS, max_turns: int = MAX_TURNS) -> Task:
    """The tasks of a dptool bundle, selected as `dptool serve` selects them (tasks, type, domain, tier, sample,
    seed), with the environment's tools and dptool's scorer.

    Args:
        bundle: The bundle folder (written by `dptool generate`).
        tasks: Only these task ids ("ID,ID,…"), or those listed in a file ("@FILE").
        type: Only tasks of these analysis types (comma-separated).
        domain: Only tasks of these domains (comma-separated).
        tier: Only tasks of these tiers (comma-separated).
        sample: A stratified sample of this many of the tasks selected.
        seed: The seed of `sample`.
        epochs: Attempts per task (inspect's --epochs overrides it).
        sql_timeout: Seconds a query may take.
        sql_memory: Megabytes a query may use.
        max_rows: Rows execute_sql returns at most.
        max_turns: Model turns (generations) per sample, as `dptool eval --max-turns`; then the sample ends
            with no answer.
    """
    if not 1 <= int(max_turns) <= MAX_TURNS_RANGE[1]:
        raise ValueError(f"max_turns={max_turns}: expected 1 to {MAX_TURNS_RANGE[1]}, as `dptool eval --max-turns`")
    problem = out_of_range("epochs", int(epochs), EPOCHS)  # as everywhere: a run's attempts are bounded
    if problem:
        raise ValueError(problem)
    path = Path(bundle)
    selection = Selection(read_ids(str(tasks)) if tasks else (), _names(type), _names(domain), _names(tier),
                          int(sample) if sample else None, int(seed))
    chosen = selection.apply(load_tasks(path))
    prompts = load_environment_prompts(PROMPT_VERSION)
    limits = Limits(float(sql_timeout), int(sql_memory), int(max_rows))
    samples = [Sample(input=Template(prompts["task"]).substitute(question=t["question"],
                                                                  format=format_hint(t, prompts)),
                      target=json.dumps(t.get("gold"), ensure_ascii=False, sort_keys=True), id=t["task_id"],
                      metadata={"domain": t.get("domain"), "analysis_type": t.get("analysis_type"),
                                "tier": t.get("tier")})
               for t in chosen]
    knowledge = Knowledge.read(path)  # once for every sample's environment
    system = Template(prompts["system"]).substitute(max_rows=limits.max_rows, schema=schema_of(knowledge.tables),
                                                    condition=prompts["conditions"]["standard"].strip())
    return Task(dataset=samples, setup=dptool_environment(str(path), limits, system, knowledge), solver=generate(),
                scorer=dptool_scorer(str(path)), cleanup=_close_environment, epochs=int(epochs), name="dptool",
                turn_limit=int(max_turns),
                metadata={"dptool": {"bundle": fingerprint(path), "selection": selection.as_dict(),
                                     "prompt_version": PROMPT_VERSION, "condition": "standard",
                                     "sql_timeout": limits.sql_timeout, "sql_memory_mb": limits.sql_memory_mb,
                                     "max_rows": limits.max_rows, "max_turns": int(max_turns)}})


@solver
def dptool_environment(bundle: str, limits: Limits, system: str, knowledge: Knowledge | None = None):
    """Open the bundle's environment for the sample (its own SQL session, the kb of its task's domain): its tools,
    and the system message that names them."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        domain = (state.metadata or {}).get("domain")
        env = await anyio.to_thread.run_sync(lambda: Environment(bundle, limits, knowledge, domain=domain))
        _OPEN[state.uuid] = env
        state.messages.insert(0, ChatMessageSystem(content=system))
        state.tools = environment_tools(env)
        return state

    return solve


async def _close_environment(state: TaskState) -> None:
    env = _OPEN.pop(state.uuid, None)
    if env is not None:
        await anyio.to_thread.run_sync(env.close)


def environment_tools(env: Environment) -> list[Tool]:
    """The environment's tools as inspect tools (names, descriptions and arguments as `dptool serve` has them)."""

    async def call(name: str, arguments: dict) -> str:
        reply = await anyio.to_thread.run_sync(env.call, name, arguments)
        if reply.error:
            raise ToolError(reply.text)  # the model reads it as the tool's error
        return reply.text

    async def execute_sql(sql: str) -> str:
        return await call("execute_sql", {"sql": sql})

    async def get_all_models() -> str:
        return await call("get_all_models", {})

    async def get_model_details(name: str) -> str:
        return await call("get_model_details", {"name": name})

    async def list_metrics(search: str | list[str] | None = None) -> str:
        return await call("list_metrics", {"search": search})

    async def search_kb(query: str, k: int = 5) -> str:
        return await call("search_kb", {"query": query, "k": k})

    async def get_kb_document(path: str) -> str:
        return await call("get_kb_document", {"path": path})

    functions = (execute_sql, get_all_models, get_model_details, list_metrics, search_kb, get_kb_document)
    return [ToolDef(fn, name=fn.__name__, description=TOOLS[fn.__name__].description,
                    parameters=dict(TOOLS[fn.__name__].arguments)).as_tool() for fn in functions]


def final_answer(completion: str) -> str | None:
    """The answer in the model's last reply: inside its last <answer></answer>, else the whole reply."""
    tagged = extract_answer(completion)
    if tagged is not None:
        return tagged
    return completion.strip() or None


@scorer(metrics=[accuracy(), stderr()])
def dptool_scorer(bundle: str):
    """dptool's comparison of the answer with the task's gold, under the task's tolerance; its reason explains."""
    by_id = {t["task_id"]: t for t in load_tasks(bundle)}

    async def score(state: TaskState, target: Target) -> Score:
        # a sample stopped by a limit never gave its final reply: what it said before its last tool call is not one
        limited = transcript().history.find_last(lambda e: isinstance(e, SampleLimitEvent)) is not None
        answer = None if limited else final_answer(state.output.completion if state.output else "")
        verdict = compare(by_id[str(state.sample_id)], answer)
        return Score(value=CORRECT if verdict.correct else INCORRECT, answer=answer,
                     explanation=verdict.reason or "correct", metadata={"kind": verdict.kind})

    return score
