"""What `dptool serve` adds to an agent's own time, measured with scripted agents through the mcp SDK's own client.

    .venv/bin/python benchmarks/bench_serve.py                      # the demo bundle, generated here first
    .venv/bin/python benchmarks/bench_serve.py --bundle BUNDLE      # a bundle already generated

A scripted agent is a perfect agent that never thinks: next_task, then the task's gold_sql through execute_sql
(search_kb with the question for a knowledge task, which has none), the same query once more, then submit_answer
with the task's gold. By default nothing happens between its calls, so what a run takes is the server's time and
the SQL's; `--think MS` adds MS milliseconds before every call (a model's turn), so that the HTTP runs show what
several agents sharing a server gain when the server is not all there is to wait for (runs `http-N-think<MS>`).
Every run serves the same sample of tasks (`dptool serve --sample N`, stratified, seed 42) into a new run folder.

Writes benchmarks/results/serve.json:
`stdio_ready_seconds`: the median, over --starts starts, of the time from starting `dptool serve` as an MCP client
starts it (a subprocess speaking MCP on stdin and stdout) to its reply to `initialize`;
`first_query_ms`: the median over tasks of a task's first execute_sql, right after next_task (a new SQL session);
`warm_query_ms`: the median of the same query run again; `bare_sql_ms`: the median of the same query run by this
process on its own read-only DuckDB connection; `overhead_per_call_ms`: the median over tasks of warm_query_ms
less bare_sql_ms (the MCP round trip, the sandbox's parser and worker, the record of the call);
`runs`: one scripted agent over stdio, then 1, 4 and 8 at once on one server over streamable HTTP, each with its
agents, seconds (first next_task to the last answer; the median of --repeat rounds, each round all runs one after
the other, so that a load that comes and goes hits them alike) and tasks_per_minute, or `not supported by this
server` when the server hands one attempt to several sessions (one that keeps one attempt open for all callers),
and server_cpu_seconds (the server's start included, and its SQL workers');
`http4_over_http1_seconds`; and the load average of the machine before and after (others' work slows a run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import duckdb
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from dptool import __version__  # noqa: E402
from tests.conftest import copy_demo_project  # noqa: E402
from tests.served import serve_http  # noqa: E402

HANDLE = "attempt_id"  # what next_task names an attempt by, on a server that keeps several open at once
UNSUPPORTED = "not supported by this server"


def _env() -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
            "PATH": os.environ.get("PATH", "")}


def _serve(bundle: Path, out: Path, *args: str) -> list[str]:
    return ["-m", "dptool.cli", "serve", str(bundle), "--out", str(out), *args]


def _text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def demo_bundle(workdir: Path) -> Path:
    """The demo project copied, built by dbt and generated, as the test suite's demo bundle is."""
    from dptool.project.dbt import DbtProject

    project = DbtProject(copy_demo_project(workdir / "project"))
    project.run("deps")
    project.run("build")
    out = workdir / "bundle"
    subprocess.run([sys.executable, "-m", "dptool.cli", "generate", "--project-dir", str(project.project_dir),
                    "--out", str(out), "--quiet"], check=True, env={**os.environ, **_env()})
    return out


# ---------------------------------------------------------------------------------------------------
# the scripted agent


class Agent:
    """One scripted agent on one MCP session: it works through tasks until next_task says there are none."""

    def __init__(self, session: ClientSession, tasks: dict[str, dict], think: float = 0.0):
        self.session, self.tasks, self.think = session, tasks, think
        self.timings: list[dict] = []  # per task: first and warm execute_sql, milliseconds
        self.handles: list[str | None] = []

    async def call(self, tool: str, arguments: dict) -> tuple[str, float]:
        if self.think:
            await anyio.sleep(self.think)  # the model's turn before its call
        start = time.perf_counter()
        result = await self.session.call_tool(tool, arguments)
        ms = (time.perf_counter() - start) * 1000
        if result.is_error:
            raise RuntimeError(f"{tool}: {_text(result)}")
        return _text(result), ms

    async def run(self) -> int:
        done = 0
        while True:
            handed = json.loads((await self.call("next_task", {}))[0])
            if "task_id" not in handed:
                return done
            task, handle = self.tasks[handed["task_id"]], handed.get(HANDLE)
            self.handles.append(handle)
            scope = {HANDLE: handle} if handle else {}
            if task.get("gold_sql"):
                first = (await self.call("execute_sql", {"sql": task["gold_sql"], **scope}))[1]
                warm = (await self.call("execute_sql", {"sql": task["gold_sql"], **scope}))[1]
                self.timings.append({"task_id": task["task_id"], "first_ms": first, "warm_ms": warm})
            else:
                await self.call("search_kb", {"query": task["question"], **scope})
            await self.call("submit_answer", {"task_id": task["task_id"], "answer": task["gold"], **scope})
            done += 1


# ---------------------------------------------------------------------------------------------------
# the runs


async def _stdio_ready(bundle: Path, out: Path) -> float:
    params = StdioServerParameters(command=sys.executable, args=_serve(bundle, out), env=_env())
    start = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return time.perf_counter() - start


async def _stdio_run(bundle: Path, out: Path, sample: int, tasks: dict) -> tuple[dict, list[Agent]]:
    params = StdioServerParameters(command=sys.executable, args=_serve(bundle, out, "--sample", str(sample)),
                                   env=_env())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        agent = Agent(session, tasks)
        start = time.perf_counter()
        done = await agent.run()
        seconds = time.perf_counter() - start
    return _run_record(1, done, seconds), [agent]


async def _http_run(bundle: Path, out: Path, sample: int, tasks: dict, agents: int,
                    think: float = 0.0) -> tuple[dict, list[Agent]]:
    proc, port = serve_http(bundle, out, "--sample", str(sample), env=_env(), stdout=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        made: list[Agent] = []
        counts: list[int] = []

        async def one() -> None:
            async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                agent = Agent(session, tasks, think)
                made.append(agent)
                counts.append(await agent.run())

        start = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(agents):
                group.start_soon(one)
        seconds = time.perf_counter() - start
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
    return _run_record(agents, sum(counts), seconds), made


def _ratio(runs: dict, over: str, under: str) -> float | None:
    a, b = runs.get(over), runs.get(under)
    return round(a["seconds"] / b["seconds"], 2) if isinstance(a, dict) and isinstance(b, dict) else None


def _run_record(agents: int, done: int, seconds: float) -> dict:
    return {"agents": agents, "tasks": done, "seconds": round(seconds, 2),
            "tasks_per_minute": round(done / seconds * 60, 1) if seconds else None}


def _shared_attempts(agents: list[Agent]) -> bool:
    """Whether several agents were handed one attempt (a server with one open attempt for all its callers)."""
    handles = [h for a in agents for h in a.handles]
    return len(agents) > 1 and (None in handles or len(set(handles)) < len(handles))


def _children_cpu() -> float:
    """CPU seconds of the servers this process started and ended, their SQL workers included (each is reaped by
    its parent: the fork server by the server, a worker by the fork server)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _median_run(runs: list) -> dict | str:
    """The run of median seconds among a run's rounds, with every round's seconds."""
    if any(isinstance(r, str) for r in runs):
        return next(r for r in runs if isinstance(r, str))
    median = statistics.median_low([r["seconds"] for r in runs])
    return {**next(r for r in runs if r["seconds"] == median), "seconds_each": [r["seconds"] for r in runs]}


def bare_sql_ms(bundle: Path, timings: list[dict], tasks: dict) -> dict[str, float]:
    """Each timed task's gold_sql on a plain read-only connection: the best of three runs, milliseconds."""
    con = duckdb.connect(str(bundle / "warehouse.duckdb"), read_only=True)
    out = {}
    for t in timings:
        sql = tasks[t["task_id"]]["gold_sql"]
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            con.execute(sql).fetchmany(101)
            runs.append((time.perf_counter() - start) * 1000)
        out[t["task_id"]] = min(runs)
    con.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=None, help="a generated bundle (default: generate the demo's)")
    parser.add_argument("--sample", type=int, default=40, help="tasks each run serves (dptool serve --sample)")
    parser.add_argument("--starts", type=int, default=7, help="starts of `dptool serve` over stdio timed")
    parser.add_argument("--agents", default="1,4,8", help="concurrent agents of each HTTP run")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of runs; each run's median seconds is kept")
    parser.add_argument("--think", type=int, default=0, metavar="MS",
                        help="also run the HTTP runs with MS milliseconds of a model's turn before every call")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        bundle = args.bundle.resolve() if args.bundle else demo_bundle(workdir)
        tasks = {t["task_id"]: t for t in map(json.loads, (bundle / "tasks.jsonl").read_text().splitlines())}
        load_before = os.getloadavg()
        ready = [anyio.run(_stdio_ready, bundle, workdir / f"ready-{i}") for i in range(args.starts)]
        rounds: list[dict] = []
        timings: list[dict] = []
        for r in range(args.repeat):  # the runs of a round one after the other: a load that comes and goes hits all
            cpu = _children_cpu()
            stdio, (agent,) = anyio.run(_stdio_run, bundle, workdir / f"stdio-{r}", args.sample, tasks)
            stdio["server_cpu_seconds"] = round(_children_cpu() - cpu, 2)
            timings += agent.timings
            runs = {"stdio-1": stdio}
            handles = True  # whether next_task names each attempt: only then may agents share a server
            for n in sorted(int(a) for a in args.agents.split(",")):
                if n > 1 and not handles:
                    runs[f"http-{n}"] = UNSUPPORTED
                    continue
                cpu = _children_cpu()
                record, agents = anyio.run(_http_run, bundle, workdir / f"http-{n}-{r}", args.sample, tasks, n)
                record["server_cpu_seconds"] = round(_children_cpu() - cpu, 2)
                handles = all(h is not None for a in agents for h in a.handles)
                runs[f"http-{n}"] = UNSUPPORTED if _shared_attempts(agents) else record
            for n in sorted(int(a) for a in args.agents.split(",")) if args.think and handles else ():
                record, agents = anyio.run(_http_run, bundle, workdir / f"http-{n}-think-{r}", args.sample, tasks, n,
                                           args.think / 1000)
                runs[f"http-{n}-think{args.think}"] = UNSUPPORTED if _shared_attempts(agents) else record
            rounds.append(runs)
        load_after = os.getloadavg()
        bare = bare_sql_ms(bundle, timings, tasks)

    runs = {name: _median_run([r[name] for r in rounds]) for name in rounds[0]}
    first = [t["first_ms"] for t in timings]
    warm = [t["warm_ms"] for t in timings]
    one, four = runs.get("http-1"), runs.get("http-4")
    report = {
        "benchmark": "serve",
        "bundle_tasks": len(tasks),
        "sample": args.sample,
        "stdio_ready_seconds": round(statistics.median(ready), 3),
        "first_query_ms": round(statistics.median(first), 1),
        "warm_query_ms": round(statistics.median(warm), 1),
        "bare_sql_ms": round(statistics.median(bare.values()), 1),
        "overhead_per_call_ms": round(statistics.median(t["warm_ms"] - bare[t["task_id"]] for t in timings), 1),
        "runs": runs,
        "http4_over_http1_seconds": (round(four["seconds"] / one["seconds"], 2)
                                     if isinstance(one, dict) and isinstance(four, dict) else None),
        "think_ms": args.think,
        "http4_over_http1_seconds_with_think": _ratio(runs, f"http-4-think{args.think}", f"http-1-think{args.think}"),
        "stdio_ready_seconds_each": [round(s, 3) for s in ready],
        "first_query_ms_max": round(max(first), 1),
        "load_average": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in load_after]},
        "cores": os.cpu_count(),
        "versions": {"dptool": __version__, "duckdb": duckdb.__version__, "python": platform.python_version()},
        "machine": {"processor": platform.machine(), "system": platform.system()},
    }
    out = REPO / "benchmarks" / "results" / "serve.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for key in ("stdio_ready_seconds", "first_query_ms", "warm_query_ms", "bare_sql_ms", "overhead_per_call_ms",
                "http4_over_http1_seconds", "http4_over_http1_seconds_with_think"):
        print(f"{key:<26} {report[key]}")
    for name, run in runs.items():
        said = run if isinstance(run, str) else f"{run['tasks']} tasks in {run['seconds']} s, " \
                                                f"{run['tasks_per_minute']} a minute"
        print(f"{name:<26} {said}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
