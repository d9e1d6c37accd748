"""The dptool dbt package's integration tests (tests/test_dbt_package.py) built on Apache Spark: every macro the
package ships renders Spark SQL, each proof passes and each negative proof fails, as on DuckDB.

Needs Java 17+, pyspark and dbt-spark (`make test-spark` installs them): skips without them, fails instead under
DPTOOL_REQUIRE_SPARK=1 (tests/spark_session.py).
"""

from __future__ import annotations

import shutil
import time

import pytest

from dptool.project.adapter_warehouse import AdapterWarehouse
from dptool.project.dbt import DbtProject
from tests import spark_session
from tests.test_dbt_package import EXPECT_FAIL, IGNORED, PACKAGE_DIR, PROVEN, Builds, _dbt, _tests


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> DbtProject:
    spark_session.require()
    root = tmp_path_factory.mktemp("dbt_package_spark")
    shutil.copytree(PACKAGE_DIR, root / "dbt_package", ignore=IGNORED)
    folder = root / "dbt_package" / "integration_tests"
    spark_session.add_target(folder, schema="dptool_it")
    return DbtProject(folder, target=spark_session.TARGET)


@pytest.fixture(scope="module")
def builds(project) -> Builds:
    _dbt(project, "deps")
    seconds = spark_session.start()
    begin = time.perf_counter()
    main = _dbt(project, "build", "--exclude", "tag:expect_fail")
    seconds["dbt build"] = time.perf_counter() - begin
    expect_fail = _dbt(project, "build", "--select", "tag:expect_fail")
    print("\nintegration tests on Spark, seconds:", {k: round(v, 1) for k, v in seconds.items()})
    return Builds(main, expect_fail)


def test_every_node_passes_on_spark(builds):
    assert builds.main
    failed = {n.name: f"{n.status}: {n.message}" for n in builds.main.values() if n.status not in ("success", "pass")}
    assert failed == {}


def test_every_macro_proof_ran_and_passed_on_spark(builds):
    tests = _tests(builds.main)
    assert {name: tests[name].status if name in tests else "missing" for name in PROVEN} == dict.fromkeys(
        PROVEN, "pass"
    )


@pytest.mark.parametrize("name", list(EXPECT_FAIL))
def test_negative_proof_fails_on_spark(builds, name):
    node = builds.expect_fail[name]
    status = "warn" if "__expect_warn__" in name else "fail"  # as tests/test_dbt_package.py: the default severity
    assert (node.status, node.failures) == (status, EXPECT_FAIL[name]), node.message


def test_seeds_keep_nulls_quotes_and_backslashes(builds, project):
    """dptool's seed loading (the dbt namespace dispatched to the package): a NULL stays NULL, not the text 'None'
    as dbt-spark's own session loader writes it, and a quote or a backslash is data, not SQL."""
    with AdapterWarehouse(project) as wh:
        rows = wh.query("select order_id, channel, city from dptool_it.orders where order_id in (1, 5) order by 1")[1]
        assert rows == [(1, "web", "Santa Barbara d'Oeste"), (5, None, "Belem")]
        text = wh.query("select quoted_text from dptool_it.cross_db__timestamp_literal_value_expected")[1]
        assert text == [("d'Oeste \\ 1",)]
        types = {row[0]: row[1] for row in wh.query("describe dptool_it.orders")[1]}
    assert types["city"] == "string" and types["amount"] == "double"  # `varchar` without a length is a string


def test_days_between_is_spark_datediff(builds):
    """Spark's own datediff, not dbt-spark's datediff (which wraps each side in assert_true(...), a function DuckDB
    lacks): a gold_sql that counts days transpiles to DuckDB."""
    sql = builds.main["cross_db__days_between"].compiled_code
    assert "datediff(cast(delivered_at as date), cast(purchased_at as date))" in sql
    assert "assert_true" not in sql
