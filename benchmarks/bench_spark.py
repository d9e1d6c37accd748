"""What `dptool generate` costs on Apache Spark against the SQL it sends, on one local SparkSession.

    .venv/bin/python benchmarks/bench_spark.py                 # subscriptions fixture and ecommerce demo, --target 8
    .venv/bin/python benchmarks/bench_spark.py --target 8 --only ecommerce

Needs `make .venv/.spark-installed` and Java 17+. Each project is built by dbt on Spark (dbt-spark's session method:
a local SparkSession in this process, as tests/spark_session.py sets it up), then `dptool generate --target N` runs
on it, every statement it sends the target recorded as it goes (AdapterSession.query, timed around the real call).
Then the bare SQL: those same statements, one after the other, straight on the same SparkSession
(`spark.sql(...).collect()`): what generate's SQL costs without dbt or dptool.

Writes benchmarks/results/spark-target<N>.json: per project validated_tasks, generate_seconds, the seconds of each
stage, statements (how many reached Spark, and their seconds inside generate), bare_sql_seconds and
generate_over_bare_sql, dbt_build_seconds, and the load average of the machine before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from dptool import __version__  # noqa: E402
from dptool.generate.pipeline import generate  # noqa: E402
from dptool.project.adapter_warehouse import PACK  # noqa: E402
from dptool.project.dbt import AdapterSession, DbtProject, dbt_version  # noqa: E402
from tests import spark_session  # noqa: E402

PROJECTS = ("subscriptions", "ecommerce")


def set_up(name: str, workdir: Path) -> tuple[DbtProject, Path | None, float]:
    """The project built on Spark: (project, its rules folder or None, seconds of dbt build)."""
    root = workdir / name / "project"
    if name == "subscriptions":
        from tests.subscriptions import cli, copy_fixture

        copy_fixture(root)
        proc = cli("init", "--project-dir", str(root))
        if proc.returncode:
            raise SystemExit(proc.stdout + proc.stderr)
        select: tuple[str, ...] = ()
    else:
        from tests.test_spark_ecommerce import SELECT, copy_ecommerce

        copy_ecommerce(root)
        select = SELECT
    spark_session.add_target(root, schema=name)
    project = DbtProject(root, target=spark_session.TARGET)
    project.run("deps")
    start = time.perf_counter()
    project.run("build", *select)
    rules = root / "business_rules"
    return project, rules if rules.is_dir() else None, time.perf_counter() - start


class Recorder:
    """Every statement AdapterSession.query sends the target, with its seconds (the real call, timed around)."""

    def __init__(self):
        self.statements: list[tuple[str, float]] = []
        self._query = AdapterSession.query

    def __enter__(self) -> Recorder:
        query, statements = self._query, self.statements

        def recorded(session, sql):
            start = time.perf_counter()
            try:
                return query(session, sql)
            finally:
                statements.append((sql, time.perf_counter() - start))
        AdapterSession.query = recorded
        return self

    def __exit__(self, *exc) -> None:
        AdapterSession.query = self._query


def bare_sql_seconds(statements: list[str]) -> float:
    """The statements one after the other on this process's SparkSession, each collected."""
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()
    start = time.perf_counter()
    for sql in statements:
        spark.sql(sql).collect()
    return time.perf_counter() - start


def run(name: str, target: int, workdir: Path) -> dict:
    project, rules, build = set_up(name, workdir)
    load_before = os.getloadavg()
    start = time.perf_counter()
    with Recorder() as recorder:
        result = generate(project.project_dir, workdir / name / "bundle", dbt_target=project.target, seed=42,
                          target_tasks=target, min_per_type=0, rules_dir=rules, echo=lambda _: None, progress=False)
    seconds = time.perf_counter() - start
    load_after = os.getloadavg()
    bare = bare_sql_seconds([sql for sql, _ in recorder.statements])
    return {
        "validated_tasks": len(result.tasks),
        "sql_tasks": sum(1 for t in result.tasks if t["gold_sql"]),
        "generate_seconds": round(seconds, 2),
        "stage_seconds": result.timings,
        "inside_dbt_seconds": result.dbt_seconds,
        "statements": len(recorder.statements),
        "statement_seconds": round(sum(s for _, s in recorder.statements), 2),
        "bare_sql_seconds": round(bare, 2),
        "generate_over_bare_sql": round(seconds / bare, 2),
        "dbt_build_seconds": round(build, 2),
        "load_average": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in load_after]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=int, default=8, help="dptool generate --target")
    parser.add_argument("--only", choices=PROJECTS, action="append", help="one project (repeatable); default both")
    args = parser.parse_args()
    reason = spark_session.unavailable()
    if reason:
        raise SystemExit(f"Spark cannot run here: {reason}")
    session = spark_session.start()
    report = {"benchmark": "generate on Spark", "target": args.target,
              "session_start_seconds": round(sum(session.values()), 2), "projects": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only or PROJECTS:
            report["projects"][name] = run(name, args.target, Path(tmp))
    report.update({
        "spark_settings": spark_session.output("bench")["server_side_parameters"],
        "queries_per_statement": PACK,  # at most, in one query_shared call (AdapterWarehouse._packed)
        "cores": os.cpu_count(),
        "versions": {"dptool": __version__, "dbt-core": dbt_version(), "pyspark": _version("pyspark"),
                     "dbt-spark": _version("dbt-spark"), "python": platform.python_version()},
    })
    for key in ("spark.sql.warehouse.dir", "spark.hadoop.javax.jdo.option.ConnectionURL",
                "spark.driver.extraJavaOptions"):  # this run's temporary folder
        report["spark_settings"].pop(key, None)
    out = REPO / "benchmarks" / "results" / f"spark-target{args.target}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for name, r in report["projects"].items():
        print(f"{name}: {r['validated_tasks']} tasks, generate {r['generate_seconds']} s, {r['statements']} statements,"
              f" bare SQL {r['bare_sql_seconds']} s ({r['generate_over_bare_sql']}x), stages {r['stage_seconds']}")
    print(f"-> {out.relative_to(REPO)}")


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    main()
