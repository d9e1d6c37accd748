"""The demo's ecommerce domain built by dbt on Apache Spark: its seeds, tables, metrics (through the rule macros and
dbt's cross-database macros), data products and every test, and the catalog-level proof of each rule -> metric
link, with the same values as on DuckDB; then `dptool generate` on Spark, whose bundle's every gold_sql reproduces
its gold on the bundle's DuckDB file.

Needs Java 17+, pyspark and dbt-spark (`make test-spark` installs them): skips without them, fails instead under
DPTOOL_REQUIRE_SPARK=1 (tests/spark_session.py).
"""

from __future__ import annotations

import json
import math
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from dptool.generate.materialize import same_rows
from dptool.project.adapter_warehouse import AdapterWarehouse
from dptool.project.dbt import DbtProject, NodeResult
from dptool.project.warehouse import Warehouse
from tests import spark_session
from tests.conftest import copy_demo_project
from tests.test_spark import generate_here

# the ecommerce domain alone: its seeds, models and tests (banking's Berka data is left out)
SELECT = ("--select", "path:seeds/ecommerce", "path:models/ecommerce", "path:tests/dbt")


def copy_ecommerce(dest: Path) -> Path:
    """The demo project without its banking domain: `dptool generate` reads every metric of the manifest."""
    root = copy_demo_project(dest)
    for part in ("models", "seeds", "macros"):
        shutil.rmtree(root / part / "banking")
    return root


@dataclass(frozen=True)
class Built:
    project: DbtProject
    manifest: dict
    results: list[NodeResult]


def _build(project: DbtProject) -> Built:
    project.run("deps")
    results = project.run("build", *SELECT)
    return Built(project, json.loads(project.manifest_path.read_text(encoding="utf-8")), results)


@pytest.fixture(scope="module")
def on_spark(tmp_path_factory) -> Built:
    spark_session.require()
    root = copy_ecommerce(tmp_path_factory.mktemp("ecommerce_spark") / "project")
    spark_session.add_target(root, schema="dptool_demo")
    project = DbtProject(root, target=spark_session.TARGET)
    seconds = spark_session.start()
    begin = time.perf_counter()
    built = _build(project)
    seconds["dbt build"] = time.perf_counter() - begin
    print("\necommerce on Spark, seconds:", {k: round(v, 1) for k, v in seconds.items()},
          f"({len(built.results)} nodes)")
    return built


@pytest.fixture(scope="module")
def on_duckdb(tmp_path_factory, on_spark) -> Built:
    root = copy_ecommerce(tmp_path_factory.mktemp("ecommerce_duckdb") / "project")
    return _build(DbtProject(root))


def test_the_ecommerce_domain_builds_on_spark(on_spark):
    assert on_spark.manifest["metadata"]["adapter_type"] == "spark"
    failed = {r.unique_id: f"{r.status}: {r.message}" for r in on_spark.results if r.status not in ("success", "pass")}
    assert failed == {}
    names = {r.name for r in on_spark.results}
    assert not [n for n in names if "berka" in n]
    tests = [r for r in on_spark.results if r.resource_type == "test"]
    # every catalog-level rule -> metric proof ran (the rule changes the metric's answer on Spark too)
    assert sum(1 for t in tests if t.name.startswith("dptool_rule_changes_answer")) >= 30, sorted(names)
    assert "assert_payments_cover_order_value" in names


def _checks(built: Built, query) -> dict[str, tuple[list[str], list[tuple]]]:
    """Each metric_checks model's column types and rows (variant first), the rows in a total order."""
    out = {}
    for node in built.manifest["nodes"].values():
        if node["resource_type"] == "model" and node["fqn"][1:3] == ["ecommerce", "metric_checks"]:
            types, rows = query(f"select * from {node['relation_name']}")
            out[node["name"]] = (types, sorted(rows, key=lambda r: tuple((v is None, str(v)) for v in r)))
    return out


def test_every_metric_under_every_rule_has_duckdbs_value_on_spark(on_spark, on_duckdb):
    """The metric_checks models (a metric's value without rules and under each rule, per group where a rule acts per
    group) on Spark and on DuckDB: the same groups, and the same values to 1e-9, or to 1e-5 where Spark computed a
    DECIMAL. `1.0` is a DECIMAL(2, 1) literal on Spark as on DuckDB, but Spark's avg() of a DECIMAL(p, s) is a
    DECIMAL(p + 4, s + 4) where DuckDB's is a DOUBLE: `avg(case ... then 1.0 else 0.0 end)`, a rate, keeps 5 digits
    (0.00725 on Spark, 0.00724929520741039 on DuckDB), and a score weighting two such rates (0.6 and 0.4) is off by
    up to 5e-6 (0.85731 on Spark, 0.857312264120529 on DuckDB): the last digit of the result's type does not bound
    the error of the digits rounded before it, and a composite casts its inputs to DOUBLEs after Spark rounded them.
    (What dptool reads itself, probes and gold rows, it reads as DuckDB computes them: tests/test_spark.py.)"""
    with AdapterWarehouse(on_spark.project) as wh:
        spark = _checks(on_spark, lambda sql: wh.typed_query(sql)[1:])
    with Warehouse(on_duckdb.project.connection().path) as wh:
        duck = _checks(on_duckdb, lambda sql: ([], wh.query(sql)[1]))
    assert sorted(spark) == sorted(duck) and len(spark) >= 30
    composites = {n["name"] for n in on_spark.manifest["nodes"].values()
                  if ((n.get("config") or {}).get("meta") or {}).get("dptool", {}).get("metric", {}).get("components")}
    assert "seller_fulfillment_score" in composites
    decimal_rates = 0
    for name, (types, rows) in spark.items():
        assert len(rows) == len(duck[name][1]), name
        rounded_inputs = name.split("__")[0] in composites
        for s, d in zip(rows, duck[name][1], strict=True):
            for x, y, type_name in zip(s, d, types, strict=True):
                if (type_name.startswith("decimal(") or rounded_inputs and isinstance(x, float)) and x is not None:
                    decimal_rates += 1
                    assert abs(x - y) <= 1e-5, (name, s, d, type_name)
                elif isinstance(x, float):
                    assert math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12), (name, s, d)
                else:
                    assert x == y, (name, s, d)
    assert decimal_rates > 0  # the difference is met, not only described


@pytest.fixture(scope="module")
def bundles(on_spark, on_duckdb, tmp_path_factory) -> tuple[Path, list[dict], list[dict], dict]:
    """`dptool generate --target 8` on Spark and on DuckDB (after the comparisons above: it rewrites the manifest)."""
    out = tmp_path_factory.mktemp("ecommerce_bundles")
    on_spark_result, on_spark_tasks = generate_here(on_spark.project, out / "spark", "ecommerce on Spark")
    _, on_duckdb_tasks = generate_here(on_duckdb.project, out / "duckdb", "ecommerce on DuckDB")
    gold_rows = {}  # the gold variant's rows as read from Spark, without the variant column
    for task_id, (columns, rows) in on_spark_result.rows.items():
        at = columns.index("variant")
        gold_rows[task_id] = [row[:at] + row[at + 1:] for row in rows if row[at] == "gold"]
    return out / "spark", on_spark_tasks, on_duckdb_tasks, gold_rows


def test_every_gold_sql_of_a_bundle_generated_on_spark_reproduces_its_gold(bundles):
    """The bundle's warehouse.duckdb was exported from Spark; each gold_sql, transpiled to DuckDB, gives the rows
    read from Spark (export checked it before writing the bundle; checked again here, on the written file)."""
    bundle, tasks, _, gold_rows = bundles
    sql_tasks = [t for t in tasks if t["gold_sql"]]
    assert len(sql_tasks) >= 8 and {t["task_id"] for t in sql_tasks} <= gold_rows.keys()
    assert all('"ecommerce".' in t["gold_sql"] for t in sql_tasks)
    with Warehouse(bundle / "warehouse.duckdb") as wh:
        differ = {t["task_id"]: (rows[:3], gold_rows[t["task_id"]][:3]) for t in sql_tasks
                  if not same_rows(rows := wh.query(t["gold_sql"])[1], gold_rows[t["task_id"]])}
    assert differ == {}


def test_spark_and_duckdb_give_the_same_ecommerce_tasks(bundles):
    _, on_spark, on_duckdb, _ = bundles
    keys = ("task_id", "question", "analysis_type", "metric_ids", "rule_ids")
    assert [{k: t.get(k) for k in keys} for t in on_spark] == [{k: t.get(k) for k in keys} for t in on_duckdb]
