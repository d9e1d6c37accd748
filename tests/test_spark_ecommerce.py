"""The demo's ecommerce domain built by dbt on Apache Spark: its seeds, tables, metrics (through the rule macros and
dbt's cross-database macros), data products and every test, and the catalog-level proof of each rule -> metric
link, with the same values as on DuckDB.

Needs Java 17+, pyspark and dbt-spark (`make test-spark` installs them): skips without them, fails instead under
DPTOOL_REQUIRE_SPARK=1 (tests/spark_session.py).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass

import pytest

from dptool.project.adapter_warehouse import AdapterWarehouse
from dptool.project.dbt import DbtProject, NodeResult
from dptool.project.warehouse import Warehouse
from tests import spark_session
from tests.conftest import copy_demo_project

# the ecommerce domain alone: its seeds, models and tests (banking's Berka data is left out)
SELECT = ("--select", "path:seeds/ecommerce", "path:models/ecommerce", "path:tests/dbt")


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
    root = copy_demo_project(tmp_path_factory.mktemp("ecommerce_spark") / "project")
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
    root = copy_demo_project(tmp_path_factory.mktemp("ecommerce_duckdb") / "project")
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


def _checks(built: Built, warehouse) -> dict[str, list[tuple]]:
    """Each metric_checks model's rows (variant first), in a total order."""
    out = {}
    for node in built.manifest["nodes"].values():
        if node["resource_type"] == "model" and node["fqn"][1:3] == ["ecommerce", "metric_checks"]:
            names, rows = warehouse.query(f"select * from {node['relation_name']}")
            out[node["name"]] = sorted((tuple(r) for r in rows), key=lambda r: tuple((v is None, str(v)) for v in r))
    return out


def test_every_metric_under_every_rule_has_duckdbs_value_on_spark(on_spark, on_duckdb):
    """The metric_checks models (a metric's value without rules and under each rule, per group where a rule acts per
    group) on Spark and on DuckDB: the same groups and values, to 1e-9."""
    with AdapterWarehouse(on_spark.project) as wh:
        spark = _checks(on_spark, wh)
    with Warehouse(on_duckdb.project.connection().path) as wh:
        duck = _checks(on_duckdb, wh)
    assert sorted(spark) == sorted(duck) and len(spark) >= 30
    for name in spark:
        assert len(spark[name]) == len(duck[name]), name
        for s, d in zip(spark[name], duck[name], strict=True):
            assert all(math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12) if isinstance(x, float) else x == y
                       for x, y in zip(s, d, strict=True)), (name, s, d)
