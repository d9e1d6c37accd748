"""Wall time of the demo: `dbt build` of the project, then each stage of `dptool generate`.

Runs on a throw-away copy of the demo project, optionally with a larger demo data set:

    .venv/bin/python benchmarks/bench_generate.py                 # committed seeds (scale 1)
    .venv/bin/python benchmarks/bench_generate.py --scale 5 --repeat 3
    .venv/bin/python benchmarks/bench_generate.py --target 1000          # >= 1,000 candidate tasks

Besides the stages, it runs every task's stored gold_sql and base_sql directly on the bundle's DuckDB
file and reports `overhead`: generate's total time / (the time generate spent inside dbt + that direct
SQL time), and `overhead vs dbt build`: generate's total time / (`dbt build` of the project + direct SQL).

Writes benchmarks/results/generate-scale<S>.json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from dptool import __version__  # noqa: E402
from dptool.demo.ecommerce import write_csvs  # noqa: E402
from dptool.generate.pipeline import generate  # noqa: E402
from dptool.project.dbt import DbtProject, dbt_version  # noqa: E402
from tests.conftest import copy_demo_project  # noqa: E402


def run_once(scale: float, target: int, workdir: Path) -> dict:
    project_dir = copy_demo_project(workdir / "project")
    if scale != 1.0:
        write_csvs(project_dir / "seeds" / "ecommerce", scale=scale)
    project = DbtProject(project_dir)
    timings = {}
    start = time.perf_counter()
    project.run("deps")
    timings["dbt deps"] = time.perf_counter() - start
    start = time.perf_counter()
    project.run("build")
    timings["dbt build"] = time.perf_counter() - start
    start = time.perf_counter()
    result = generate(project_dir, workdir / "bundle", target_tasks=target, echo=lambda _: None, progress=False)
    timings["generate"] = time.perf_counter() - start
    timings.update({f"generate.{k}": v for k, v in result.timings.items()})
    timings["generate: inside dbt"] = result.dbt_seconds
    timings["direct sql"] = direct_sql_seconds(result.bundle, result.tasks)
    # what generate costs over the work it cannot avoid: dbt building the gold models, and their SQL
    timings["overhead"] = timings["generate"] / (result.dbt_seconds + timings["direct sql"])
    # and over the floor of a user who runs `dbt build` and then the same SQL by hand
    timings["overhead vs dbt build"] = timings["generate"] / (timings["dbt build"] + timings["direct sql"])
    candidates = len(result.tasks) + len(result.dropped) + sum(result.rejected.values())
    return {"timings": timings, "tasks": len(result.tasks), "dropped": len(result.dropped), "candidates": candidates}


def direct_sql_seconds(bundle: Path, tasks: list[dict]) -> float:
    """The same queries, run straight on DuckDB: what the gold answers cost without dbt or dptool."""
    import duckdb

    con = duckdb.connect(str(bundle / "warehouse.duckdb"), read_only=True)
    start = time.perf_counter()
    for task in tasks:
        for key in ("gold_sql", "base_sql"):
            if task[key]:
                con.execute(task[key]).fetchall()
    seconds = time.perf_counter() - start
    con.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="demo data scale (1.0 = about 10,000 orders)")
    parser.add_argument("--target", type=int, default=60, help="dptool generate --target")
    parser.add_argument("--repeat", type=int, default=1, help="runs; the median is reported")
    args = parser.parse_args()

    runs = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(run_once(args.scale, args.target, Path(tmp)))
    names = list(runs[0]["timings"])
    median = {n: round(statistics.median(r["timings"][n] for r in runs), 3) for n in names}
    report = {
        "benchmark": "generate",
        "scale": args.scale,
        "target": args.target,
        "repeat": args.repeat,
        "tasks": [r["tasks"] for r in runs],
        "candidates": [r["candidates"] for r in runs],
        "dropped": [r["dropped"] for r in runs],
        "median_seconds": median,
        "versions": {"dptool": __version__, "dbt-core": dbt_version(), "python": platform.python_version()},
        "machine": {"processor": platform.machine(), "system": platform.system()},
    }
    out = REPO / "benchmarks" / "results" / f"generate-scale{args.scale:g}-target{args.target}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    width = max(len(n) for n in names)
    for n in names:
        print(f"{n:<{width}}  {median[n]:8.2f}" + ("" if n.startswith("overhead") else " s"))
    print(f"candidates {report['candidates']}, tasks {report['tasks']}, dropped {report['dropped']} "
          f"-> {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
