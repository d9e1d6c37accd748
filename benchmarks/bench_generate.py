"""What `dptool generate` costs against the SQL it cannot avoid, on a throw-away copy of the demo project.

    .venv/bin/python benchmarks/bench_generate.py --target 1000             # committed seeds (scale 1)
    .venv/bin/python benchmarks/bench_generate.py --target 1000 --scale 10  # both domains 10x (Olist's size)

With `--scale S`, both demo domains are written at that scale first (`dptool demo-data --domain ecommerce
--scale S` and `--domain banking --scale S`), and `dbt build` loads their seeds with DuckDB's CSV reader
(`--vars '{demo_csv_reader: true}'`, see macros/seed_csv_reader.sql). Then `dbt build`, then
`dptool generate --target N`, then
the bare SQL: every validated task's stored gold_sql and base_sql, run one after the other on one DuckDB
connection to the bundle's warehouse (what the gold answers cost without dbt or dptool). Also the same
queries as generate runs SQL (`Warehouse.query_shared`: on all cores, each ephemeral model that several
queries inline computed once): the floor generate's own SQL has.

Writes benchmarks/results/generate-scale<S>-target<N>.json: validated_tasks, generate_seconds,
bare_sql_seconds, seconds_per_1000_tasks, generate_over_bare_sql, shared_sql_seconds and
generate_over_shared_sql, the seconds of each stage (wall and CPU, all threads) and inside dbt (wall and CPU),
the candidates each step ran and kept (`candidates`: skeletons probed, gold models compiled, gold and support
queries run, tasks validated and kept, rounds; `dropped_by_reason`, `rejected_by_check`), and the load average of
the machine before and after (others' work slows a run).

Peak resident memory (`peak_rss_mib`): `demo_data` is the largest `dptool demo-data` process (its own VmHWM
after its exec: the rusage of a child forked from this large process counts the pages they shared before it);
`dbt_build` and `generate` run in this process, so each is its VmHWM in /proc/self/status after the peak was reset
(`5` written to /proc/self/clear_refs) when the stage began: Python, dbt and DuckDB together.

Then what no generate can skip for the tasks it kept, each part timed alone (wall and CPU seconds, all threads):
`kept`: one `dbt compile` of the kept tasks' gold and support texts (dbt writes every query), their support queries
run on the project's warehouse (a gold resting on too few rows is dropped), and their gold_sql run again on the
bundle's (export's reproduction check); with the shared SQL, which is what their gold models cost on the target.
`least_generate_over_shared_sql` is the least generate_over_shared_sql those parts allow in the shape generate
runs them, each part's wall seconds as measured alone on this machine (its cores and its load): dbt compiles while
the reproduction runs beside it (the longer of the two), and the gold and support queries, which need their compile
first, take the time they take. `least_all_at_once_over_shared_sql` is the bound with every part at once and
nothing else on the machine: the longer of dbt's wall time and all their CPU seconds spread over every core.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import sqlglot  # noqa: E402

from dptool import __version__  # noqa: E402
from dptool.generate import materialize  # noqa: E402
from dptool.generate.pipeline import generate  # noqa: E402
from dptool.project.batch import CTE_PREFIX, compile_texts  # noqa: E402
from dptool.project.dbt import DbtProject, dbt_version  # noqa: E402
from dptool.project.warehouse import DEFAULT_MEMORY_LIMIT, MEMORY_LIMIT_ENV, Warehouse, duckdb_config  # noqa: E402
from dptool.sql import SharedQuery  # noqa: E402
from tests.conftest import copy_demo_project  # noqa: E402

DOMAINS = ("ecommerce", "banking")


def run_once(scale: float, target: int, workdir: Path) -> dict:
    project_dir = copy_demo_project(workdir / "project")
    demo_data: dict[str, float] = {}
    demo_peaks: list[int] = []
    build = ["build"]
    if scale != 1.0:
        for domain in DOMAINS:
            start = time.perf_counter()
            demo_peaks.append(_child_peak(["demo-data", "--domain", domain, "--scale", f"{scale:g}",
                                           "--out", str(project_dir / "seeds" / domain)]))
            demo_data[domain] = round(time.perf_counter() - start, 2)
        build += ["--vars", "{demo_csv_reader: true}"]  # the seeds through DuckDB's CSV reader, not agate
    peak = {"demo_data": max(demo_peaks)} if demo_peaks else {}
    project = DbtProject(project_dir)
    project.run("deps")
    start = time.perf_counter()
    with _peak_rss(peak, "dbt_build"):
        project.run(*build)
    dbt_build = time.perf_counter() - start
    load_before = os.getloadavg()
    start, cpu = time.perf_counter(), time.process_time()
    with TextRecorder() as texts, _peak_rss(peak, "generate"):
        result = generate(project_dir, workdir / "bundle", target_tasks=target, echo=lambda _: None, progress=False)
    generate_seconds = time.perf_counter() - start
    generate_cpu = time.process_time() - cpu
    load_after = os.getloadavg()
    bare = bare_sql_seconds(result.bundle, result.tasks)
    kept = kept_work(project, texts.texts, result.bundle, result.tasks)
    shared = kept["shared_sql"]["seconds"]
    least, at_once = least_seconds(kept, os.cpu_count() or 1)
    tasks = len(result.tasks)
    return {
        "validated_tasks": tasks,
        "sql_tasks": sum(1 for t in result.tasks if t["gold_sql"]),
        "dropped": len(result.dropped),
        "rejected": sum(result.rejected.values()),
        "generate_seconds": round(generate_seconds, 2),
        "bare_sql_seconds": round(bare, 2),
        "seconds_per_1000_tasks": round(generate_seconds / tasks * 1000, 2),
        "generate_over_bare_sql": round(generate_seconds / bare, 2),
        "shared_sql_seconds": shared,
        "generate_over_shared_sql": round(generate_seconds / shared, 2),
        "stage_seconds": result.timings,
        "generate_cpu_seconds": round(generate_cpu, 2),
        "stage_cpu_seconds": result.cpu_timings,
        "inside_dbt_seconds": result.dbt_seconds,
        "inside_dbt_cpu_seconds": result.dbt_cpu_seconds,
        "kept": kept,
        "least_generate_over_shared_sql": round(least / shared, 2),
        "least_all_at_once_over_shared_sql": round(at_once / shared, 2),
        "candidates": result.counts,
        "dropped_by_reason": dict(sorted(Counter(_reason(r) for r in result.dropped.values()).items())),
        "rejected_by_check": dict(sorted((k, v) for k, v in result.rejected.items() if v)),
        "dbt_build_seconds": round(dbt_build, 2),
        "demo_data_seconds": demo_data,
        "peak_rss_mib": peak,
        "load_average": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in load_after]},
    }


# runs `python -m dptool.cli ARGS` and says its peak: VmHWM of the process after its exec, where the rusage of a
# child forked from this (large) process also counts the pages it shared with it before the exec
_PEAK_OF_CLI = ("import runpy, sys\n"
                "sys.argv = ['dptool', *sys.argv[1:]]\n"
                "try:\n"
                "    runpy.run_module('dptool.cli', run_name='__main__')\n"
                "finally:\n"
                "    status = open('/proc/self/status').read()\n"
                "    print('dptool-peak-kib', status.split('VmHWM:')[1].split()[0], file=sys.stderr)\n")


def _child_peak(args: list[str]) -> int:
    """Run `dptool ARGS` in a new process to its end; its own peak resident memory in MiB."""
    done = subprocess.run([sys.executable, "-c", _PEAK_OF_CLI, *args], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"dptool {' '.join(args[:3])} failed: {done.stderr[-500:]}")
    return round(int(done.stderr.rsplit("dptool-peak-kib ", 1)[1].split()[0]) / 1024)


def least_seconds(kept: dict[str, dict], cores: int) -> tuple[float, float]:
    """The least seconds the kept tasks' parts take in generate's shape, and all at once (module docstring)."""
    wall = {part: seconds["seconds"] for part, seconds in kept.items()}
    compile_, reproduce = wall["dbt_compile"], wall.get("reproduction_sql", 0.0)
    beside = max(compile_, reproduce) if cores > 1 else compile_ + reproduce
    shaped = beside + wall["shared_sql"] + wall.get("support_sql", 0.0)
    return shaped, max(compile_, sum(seconds["cpu_seconds"] for seconds in kept.values()) / cores)


def _reason(reason: str) -> str:
    """A drop's reason without what names its candidate (a SQL error's model, a not scorable answer's numbers)."""
    if reason.startswith("SQL error"):
        return "SQL error"
    if reason.startswith("support query"):
        return "support query failed"
    return re.sub(r"\d[\d.,]*", "N", reason)[:80]


class TextRecorder:
    """Every text materialize hands `compile_texts`, by name (the gold models of each round, and its support
    queries), recorded as generate runs."""

    def __init__(self):
        self.texts: dict[str, str] = {}

    def __enter__(self) -> TextRecorder:
        texts = self.texts

        def recorded(project, given, *args, **kwargs):
            texts.update(given)
            return compile_texts(project, given, *args, **kwargs)
        materialize.compile_texts = recorded
        return self

    def __exit__(self, *exc) -> None:
        materialize.compile_texts = compile_texts


def kept_work(project: DbtProject, texts: dict[str, str], bundle: Path, tasks: list[dict]) -> dict[str, dict]:
    """The work each kept task needs, each part alone: {part: {seconds, cpu_seconds}} (see the module docstring)."""
    order = sorted((t for t in tasks if t["gold_sql"]), key=lambda t: (t["metric_ids"][0], t["task_id"]))
    # a gold statement that counts its own support has no support text
    supported = [t for t in order if f"support__{t['task_id']}" in texts]
    names = [t["task_id"] for t in order] + [f"support__{t['task_id']}" for t in supported]
    materialize.remove_models(project)  # as during generate's compiles: dbt parses no gold model
    project.run("parse")  # the project as generate compiled it, parsed before the clock starts
    parts = {}
    with _clock(parts, "dbt_compile"):
        compiled = compile_texts(project, {n: texts[n] for n in names})
    failed = [name for name, c in compiled.items() if c.sql is None]
    if failed:
        raise SystemExit(f"the kept tasks' texts did not compile again: {failed[:3]}")
    if supported:
        with Warehouse.of(project.connection()) as wh, _clock(parts, "support_sql"):
            _all(wh.query_shared(compiled[f"support__{t['task_id']}"].query for t in supported))
    reproduced = [_shared(t["gold_sql"]) for t in order]
    shared = [_shared(t[key]) for t in tasks for key in ("gold_sql", "base_sql") if t[key]]
    with Warehouse(bundle / "warehouse.duckdb") as wh:
        with _clock(parts, "reproduction_sql"):
            _all(wh.query_shared(reproduced))
        with _clock(parts, "shared_sql"):  # the floor: the queries as generate runs SQL (see the module docstring)
            _all(wh.query_shared(shared))
    return parts


@contextmanager
def _peak_rss(peak: dict, name: str) -> Iterator[None]:
    """peak[name]: the most resident memory of this process while the block ran, in MiB (see the module docstring)."""
    Path("/proc/self/clear_refs").write_text("5")
    yield
    status = Path("/proc/self/status").read_text()
    peak[name] = round(int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024)


@contextmanager
def _clock(parts: dict, name: str) -> Iterator[None]:
    start, cpu = time.perf_counter(), time.process_time()
    yield
    parts[name] = {"seconds": round(time.perf_counter() - start, 2), "cpu_seconds": round(time.process_time() - cpu, 2)}


def _all(results) -> None:
    for result in results:
        if isinstance(result, Exception):
            raise result


def bare_sql_seconds(bundle: Path, tasks: list[dict]) -> float:
    """Every task's gold_sql and base_sql, one after the other, straight on DuckDB."""
    import duckdb

    con = duckdb.connect(str(bundle / "warehouse.duckdb"), read_only=True, config=duckdb_config())
    start = time.perf_counter()
    for task in tasks:
        for key in ("gold_sql", "base_sql"):
            if task[key]:
                con.execute(task[key]).fetchall()
    seconds = time.perf_counter() - start
    con.close()
    return seconds


def _shared(sql: str) -> SharedQuery:
    tree = sqlglot.parse_one(sql, read="duckdb")
    with_ = tree.args.get("with_") or tree.args.get("with")
    ctes = [c for c in with_.expressions if c.alias.startswith(CTE_PREFIX)] if with_ else []
    for c in ctes:
        with_.expressions.remove(c)
    rest = tree.sql("duckdb")
    shared = tuple((c.alias, c.this.sql("duckdb")) for c in ctes)

    def assemble(given):
        lead = ", ".join(f"{n} AS ({body})" for n, body in given)
        return rest.replace("WITH ", f"WITH {lead}, ", 1) if with_.expressions else f"WITH {lead} {rest}"
    return SharedQuery(shared, assemble) if shared else SharedQuery.plain(sql)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="scale of both demo domains (1 = the committed "
                        "seeds: ~10,000 orders, ~90,000 bank transactions)")
    parser.add_argument("--target", type=int, default=60, help="dptool generate --target")
    parser.add_argument("--repeat", type=int, default=1, help="runs; the one of median generate time is reported")
    args = parser.parse_args()

    runs = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(run_once(args.scale, args.target, Path(tmp)))
    median = statistics.median_low([r["generate_seconds"] for r in runs])
    report = {
        "benchmark": "generate",
        "scale": args.scale,
        "target": args.target,
        **next(r for r in runs if r["generate_seconds"] == median),
        "runs": [{k: r[k] for k in ("generate_seconds", "bare_sql_seconds", "shared_sql_seconds",
                                    "least_generate_over_shared_sql", "load_average")} for r in runs],
        "cores": os.cpu_count(),
        "duckdb_memory_limit": os.environ.get(MEMORY_LIMIT_ENV) or
        f"dptool's default, {DEFAULT_MEMORY_LIMIT} of the memory",
        "versions": {"dptool": __version__, "dbt-core": dbt_version(), "python": platform.python_version()},
        "machine": {"processor": platform.machine(), "system": platform.system()},
    }
    out = REPO / "benchmarks" / "results" / f"generate-scale{args.scale:g}-target{args.target}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for key in ("validated_tasks", "generate_seconds", "bare_sql_seconds", "seconds_per_1000_tasks",
                "generate_over_bare_sql", "shared_sql_seconds", "generate_over_shared_sql", "dbt_build_seconds",
                "inside_dbt_seconds", "inside_dbt_cpu_seconds", "generate_cpu_seconds",
                "least_generate_over_shared_sql", "least_all_at_once_over_shared_sql", "peak_rss_mib"):
        print(f"{key:<24} {report[key]}")
    print("candidates " + ", ".join(f"{k} {v}" for k, v in report["candidates"].items()))
    for part, seconds in report["kept"].items():
        print(f"  kept {part:<17} {seconds['seconds']:8.2f} s  (cpu {seconds['cpu_seconds']:.2f} s)")
    for stage, seconds in report["stage_seconds"].items():
        print(f"  {stage:<22} {seconds:8.2f} s  (cpu {report['stage_cpu_seconds'][stage]:.2f} s)")
    print(f"load average before {report['load_average']['before']}, after {report['load_average']['after']} "
          f"-> {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
