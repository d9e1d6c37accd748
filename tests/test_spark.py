"""The subscriptions fixture built by dbt on Apache Spark (dbt-spark's session method, a local SparkSession), read
through the adapter and exported to a bundle's DuckDB file, each compared with the same project built on DuckDB;
and the engine differences dptool meets on Spark, each named.

Needs Java 17+, pyspark and dbt-spark (`make test-spark` installs them): skips without them, fails instead under
DPTOOL_REQUIRE_SPARK=1. One JVM serves the process (tests/spark_session.py). The seconds of each stage are printed
(`pytest -s`), for the README.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest
import sqlglot

from dptool.answers import compare
from dptool.generate.export import bundle_tables
from dptool.generate.pipeline import GenerateResult, generate
from dptool.generate.profile import profile_dimensions
from dptool.project.adapter_warehouse import AdapterWarehouse, export_from_adapter
from dptool.project.catalog import load_catalog
from dptool.project.dbt import DbtProject, NodeResult
from dptool.project.warehouse import Warehouse, export_tables
from tests import spark_session
from tests.subscriptions import FIXTURE, cli, copy_fixture, set_up


@dataclass(frozen=True)
class Built:
    project: DbtProject
    manifest: dict
    results: list[NodeResult]
    seconds: dict[str, float]


@pytest.fixture(scope="module")
def on_spark(tmp_path_factory) -> Built:
    """The fixture as a user on Spark has it: `dptool init`, a `spark` target, `dbt deps`, `dbt seed`, `dbt build`."""
    spark_session.require()
    root = copy_fixture(tmp_path_factory.mktemp("spark") / "project")
    proc = cli("init", "--project-dir", str(root))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    spark_session.add_target(root, schema="subscriptions")
    project = DbtProject(root, target=spark_session.TARGET)
    project.run("deps")
    seconds = spark_session.start()
    begin = time.perf_counter()
    results = project.run("seed")
    seconds["dbt seed"] = time.perf_counter() - begin
    begin = time.perf_counter()
    results += project.run("build", "--exclude", "resource_type:seed")
    seconds["dbt build (no seeds)"] = time.perf_counter() - begin
    print("\nsubscriptions on Spark, seconds:", {k: round(v, 1) for k, v in seconds.items()})
    return Built(project, json.loads(project.manifest_path.read_text(encoding="utf-8")), results, seconds)


@pytest.fixture(scope="module")
def on_duckdb(tmp_path_factory, on_spark) -> Built:
    """The same fixture built on DuckDB (its `dev` target), to compare with."""
    root = copy_fixture(tmp_path_factory.mktemp("duckdb") / "project")
    project = set_up(root)
    return Built(project, json.loads(project.manifest_path.read_text(encoding="utf-8")), [], {})


def _catalog(built: Built):
    """The project's catalog, with the rule documents `--rules-dir business_rules` gives `dptool generate`."""
    folder = built.project.project_dir / "business_rules"
    return load_catalog(built.manifest, rule_documents={p.stem: p.read_text(encoding="utf-8")
                                                        for p in folder.glob("*.md")})


# the small benchmark of tests/subscriptions.py (GENERATE_ARGS), generated in this process: Spark's metastore
# (Derby) admits the one JVM that holds it, so `dptool generate` cannot run in a subprocess here
GENERATE = {"seed": 42, "target_tasks": 8, "min_per_type": 0}


def generate_here(project: DbtProject, out: Path, label: str) -> tuple[GenerateResult, list[dict]]:
    """`dptool generate --dbt-target <the project's target> --target 8` in this process (`--rules-dir
    business_rules` where the project has that folder);
    prints the seconds of each stage (`pytest -s`, for the README)."""
    rules = project.project_dir / "business_rules"  # the fixture's rule documents; the demo's are its macros'
    result = generate(project.project_dir, out, dbt_target=project.target, progress=False, echo=lambda _: None,
                      rules_dir=rules if rules.is_dir() else None, **GENERATE)
    print(f"\n{label}: dptool generate --target {GENERATE['target_tasks']}, {len(result.tasks)} tasks, seconds:",
          {k: round(v, 1) for k, v in result.timings.items()}, f"(total {sum(result.timings.values()):.1f})")
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    return result, tasks


@pytest.fixture(scope="module")
def bundles(on_spark, on_duckdb, tmp_path_factory) -> tuple[list[dict], list[dict]]:
    """The tasks of `dptool generate` on Spark and on DuckDB, same fixture, seed and target."""
    out = tmp_path_factory.mktemp("bundles")
    _, on_spark_tasks = generate_here(on_spark.project, out / "spark", "subscriptions on Spark")
    _, on_duckdb_tasks = generate_here(on_duckdb.project, out / "duckdb", "subscriptions on DuckDB")
    return on_spark_tasks, on_duckdb_tasks


def test_the_fixture_builds_on_spark(on_spark):
    assert on_spark.manifest["metadata"]["adapter_type"] == "spark"
    failed = {r.unique_id: f"{r.status}: {r.message}" for r in on_spark.results if r.status not in ("success", "pass")}
    assert failed == {}
    kinds = [r.resource_type for r in on_spark.results]
    assert kinds.count("seed") == 5 and kinds.count("model") >= 10 and kinds.count("test") >= 10, kinds


def test_every_seed_row_is_loaded_with_its_nulls(on_spark):
    """dbt-spark's own session loader writes a NULL as the text 'None' (dbt-labs/dbt-adapters#487); dptool's doesn't."""
    relations = {n["name"]: n["relation_name"] for n in on_spark.manifest["nodes"].values()
                 if n["resource_type"] == "seed"}
    lines = (FIXTURE / "seeds" / "raw_subscriptions.csv").read_text(encoding="utf-8").splitlines()[1:]
    running = sum(1 for line in lines if line.endswith(","))  # canceled_on is empty while a subscription runs
    with AdapterWarehouse(on_spark.project) as wh:
        for name, relation in relations.items():
            expected = len((FIXTURE / "seeds" / f"{name}.csv").read_text(encoding="utf-8").splitlines()) - 1
            assert wh.query(f"select count(*) from {relation}")[1] == [(expected,)], name
        rows = wh.query(f"select count(*) - count(canceled_on), count(*) from {relations['raw_subscriptions']}")[1]
        assert rows == [(running, len(lines))] and 0 < running < len(lines)


def _rows(path: Path, table: str, order: str) -> tuple[list[str], list[tuple]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        types = [r[1] for r in con.execute(f'describe "{table.split(".")[0]}"."{table.split(".")[1]}"').fetchall()]
        rows = con.execute(f'select * from "{table.split(".")[0]}"."{table.split(".")[1]}" order by {order}').fetchall()
    finally:
        con.close()
    return types, rows


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-12)
    return a == b


def test_the_bundle_tables_exported_from_spark_are_those_of_duckdb(on_spark, on_duckdb, tmp_path):
    """Each agent-visible table, exported from Spark through the adapter, holds DuckDB's rows with DuckDB's types
    (Spark's DECIMAL(27,6) of `cents / 100.0` is a DOUBLE, as DuckDB computes it)."""
    spark_tables = bundle_tables(_catalog(on_spark))
    duck_tables = bundle_tables(_catalog(on_duckdb))
    assert [t[1:] for t in spark_tables] == [t[1:] for t in duck_tables] and len(spark_tables) >= 4
    begin = time.perf_counter()
    export_from_adapter(on_spark.project.connection(), spark_tables, tmp_path / "spark.duckdb")
    print(f"\nexport of {len(spark_tables)} tables from Spark: {time.perf_counter() - begin:.1f} s")
    export_tables(on_duckdb.project.connection(), duck_tables, tmp_path / "duckdb.duckdb")
    for _, schema, name in spark_tables:
        spark_types, spark_rows = _rows(tmp_path / "spark.duckdb", f"{schema}.{name}", "all")
        duck_types, duck_rows = _rows(tmp_path / "duckdb.duckdb", f"{schema}.{name}", "all")
        # DuckDB's integers are 4 bytes here; every integer read through an adapter is a BIGINT
        assert spark_types == [t if t != "INTEGER" else "BIGINT" for t in duck_types], name
        assert len(spark_rows) == len(duck_rows) > 0, name
        bad = [(s, d) for s, d in zip(spark_rows, duck_rows, strict=True)
               if not all(_same(x, y) for x, y in zip(s, d, strict=True))]
        assert bad == [], f"{name}: {bad[:3]}"


def test_dimension_profiles_read_through_spark_equal_duckdb(on_spark, on_duckdb):
    catalog = _catalog(on_spark)
    assert catalog.dimensions
    with AdapterWarehouse(on_spark.project) as wh:
        begin = time.perf_counter()
        on_spark_profiles = profile_dimensions(catalog, wh)
        print(f"\nprofiles of {len(catalog.dimensions)} dimensions on Spark: {time.perf_counter() - begin:.1f} s")
    with Warehouse(on_duckdb.project.connection().path) as wh:
        on_duckdb_profiles = profile_dimensions(_catalog(on_duckdb), wh)
    assert on_spark_profiles == on_duckdb_profiles


# --- engine differences, each named: what dptool reads from Spark and what DuckDB computes from the same SQL ---

def _duckdb(sql: str) -> list[tuple]:
    con = duckdb.connect()
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_integer_division_is_not_truncated_on_spark_nor_duckdb(on_spark):
    """`/` of two integers is a fraction on Spark and on DuckDB (PostgreSQL truncates); Spark's `div` truncates,
    and sqlglot writes it as DuckDB's `//`, so a gold_sql transpiled to DuckDB keeps the meaning."""
    sql = "select 7 / 2 as ratio, 7 div 2 as whole, -7 div 2 as negative"
    with AdapterWarehouse(on_spark.project) as wh:
        assert wh.query(sql)[1] == [(3.5, 3, -3)]
    duck = sqlglot.transpile(sql, read="spark", write="duckdb")[0]
    assert "//" in duck and _duckdb(duck) == [(3.5, 3, -3)]


def test_nulls_sort_first_on_spark_and_last_on_duckdb(on_spark):
    """An ascending ORDER BY puts NULLs first on Spark and last on DuckDB (both put them last descending).
    The SQL of a model keeps its engine's order in the bundle: sqlglot writes Spark's default out (NULLS FIRST)."""
    sql = "select x from (values (2), (null), (1)) as t(x) order by x"
    with AdapterWarehouse(on_spark.project) as wh:
        on_spark_rows = wh.query(sql)[1]
        assert wh.query(sql + " desc")[1] == [(2,), (1,), (None,)] == _duckdb(sql + " desc")
    assert on_spark_rows == [(None,), (1,), (2,)]
    assert _duckdb(sql) == [(1,), (2,), (None,)]
    transpiled = sqlglot.transpile(sql, read="spark", write="duckdb")[0]
    assert transpiled.endswith("NULLS FIRST") and _duckdb(transpiled) == on_spark_rows


def test_decimals_and_timestamps_read_from_spark(on_spark):
    """Spark's DECIMAL comes back as a float, with the digits Spark kept: a decimal quotient has max(6, s1 + p2 + 1)
    digits after the point (and fewer when 38 digits do not hold it), where DuckDB divides decimals as DOUBLEs. So
    `1.0 * sum(discount) / sum(subtotal)` over DECIMAL(27,6) columns is rounded to 6 digits on Spark: within any
    task's tolerance (1e-3 relative), not within the 1e-9 of a gold_sql re-run on the bundle's DuckDB file.
    A TIMESTAMP (an instant in the session's time zone) reads back as the wall-clock time written, as DuckDB's."""
    sql = ("select cast(1 as decimal(10, 2)) / 3 as six_digits, cast(1 as decimal(10, 2)) / cast(3 as decimal(10, 0))"
           " as thirteen_digits, cast(1 as double) / 3 as double_quotient,"
           " timestamp'2018-01-01 12:30:00' as noon, date'2018-02-28' as day")
    with AdapterWarehouse(on_spark.project) as wh:
        raw = wh.session.query(sql)[2]
        _, types, rows = wh.typed_query(sql)
    assert types[0].endswith(",6)") and types[1].endswith(",13)") and type(raw[0][0]).__name__ == "Decimal"
    six, thirteen, double, noon, day = rows[0]
    assert type(six) is float and six == 0.333333 and thirteen == 0.3333333333333 and double == 1 / 3
    assert _duckdb("select cast(1 as decimal(10, 2)) / 3")[0][0] == 1 / 3
    assert noon == dt.datetime(2018, 1, 1, 12, 30) and noon.tzinfo is None and day == dt.date(2018, 2, 28)
    assert _duckdb("select timestamp '2018-01-01 12:30:00', date '2018-02-28'") == [(noon, day)]


def test_spark_and_duckdb_give_the_same_benchmark(bundles):
    """The same tasks (ids, questions, analysis types, metrics, rules) and golds equal within each task's tolerance,
    either way round; export re-ran each Spark task's gold_sql on the bundle's DuckDB file (to 1e-9), or there would
    be no bundle."""
    on_spark, on_duckdb = bundles
    assert len([t for t in on_spark if t["gold_sql"]]) >= 8
    keys = ("task_id", "question", "analysis_type", "metric_ids", "rule_ids", "answer_format", "tolerance")
    assert [{k: t.get(k) for k in keys} for t in on_spark] == [{k: t.get(k) for k in keys} for t in on_duckdb]
    wrong = {}
    for s, d in zip(on_spark, on_duckdb, strict=True):
        if s["gold_sql"] is None:  # a knowledge task: a passage of the rule documents
            assert s["gold"] == d["gold"], s["task_id"]
            continue
        for against, answer in (("gold", d["gold"]), ("base", d.get("base"))):
            if answer is None:
                continue
            there, back = compare(s, answer, against=against), compare(d, s[against], against=against)
            if not (there.correct and back.correct):
                wrong[s["task_id"], against] = there.reason or back.reason
    assert wrong == {}


def test_quotients_and_averages_are_read_from_spark_as_duckdb_computes_them(on_spark):
    """The normalization the benchmark needs: Spark's quotient and average of DECIMALs are DECIMALs of bounded
    scale (6 and 5 digits here), DuckDB's are DOUBLEs; the adapter's `query` (probes, gold rows) casts each
    numerator and average argument to a double (dptool.sql.double_arithmetic), so it reads DuckDB's values."""
    # DECIMAL(27, 6), as the fixture's `cents / 100.0` is on Spark
    values = ("(values (cast(1.50 as decimal(27, 6)), cast(27.05 as decimal(27, 6))), (2.25, 40.60), (0.10, 3.00))"
              " as t(a, b)")
    sql = f"select 1.0 * sum(a) / sum(b) as ratio, avg(case when a > 2 then 1.0 else 0.0 end) as rate from {values}"
    with AdapterWarehouse(on_spark.project) as wh:
        _, types, raw = wh.typed_query(sql)
        names, rows = wh.query(sql)
    assert types[0].startswith("decimal(") and raw == [(round(3.85 / 70.65, 6), 0.33333)]
    duck = _duckdb(sql)
    assert names == ["ratio", "rate"] and rows == [pytest.approx(duck[0], rel=1e-12)]
    assert duck == [pytest.approx((3.85 / 70.65, 1 / 3), rel=1e-12)]


# --- several queries of one query_shared call in one Spark statement (AdapterWarehouse._packed) ---

class _Statements:
    """Every statement AdapterSession.query sends the target while it is open (the real call, recorded)."""

    def __init__(self):
        self.sent: list[str] = []

    def __enter__(self) -> list[str]:
        from dptool.project.dbt import AdapterSession

        self._query = query = AdapterSession.query
        sent = self.sent

        def recorded(session, sql):
            sent.append(sql)
            return query(session, sql)
        AdapterSession.query = recorded
        return sent

    def __exit__(self, *exc) -> None:
        from dptool.project.dbt import AdapterSession

        AdapterSession.query = self._query


def _shared_queries(on_spark, broken: int | None = None) -> list:
    """Queries of the fixture's customers by country, each reading one CTE `m` (and one with a CTE of its own)."""
    from dptool.sql import SharedQuery

    customers = next(n["relation_name"] for n in on_spark.manifest["nodes"].values() if n["name"] == "dim_customers")
    # a quotient of DECIMALs in the shared CTE: 6 digits on Spark, a DOUBLE as `query` reads it (and DuckDB computes it)
    body = f"select customer_id, country, segment, cast(1 as decimal(10, 2)) / 3 as third from {customers}"
    filters = ["segment is not null", "country is not null", "customer_id is not null", "1 = 1"]

    def query(where: str, own: str):
        return SharedQuery((("m", body),), lambda ctes: "with " + ", ".join(f"{n} as (\n{b}\n)" for n, b in ctes)
                           + f", own as (select * from m where {own})"
                           + f"\nselect country, count(*) as n, max(third) as third from own where {where}"
                           + " group by country order by country")
    return [query("no_such_column = 1" if i == broken else f, "1 = 1") for i, f in enumerate(filters)]


def test_a_failing_query_of_a_statement_is_reported_alone_and_a_stop_sends_no_more(on_spark, monkeypatch):
    """A packed statement that fails runs its queries again one by one: the error is the failing query's own, the
    others' rows are theirs. A caller that stops sends no more statements."""
    from dptool.project import adapter_warehouse

    monkeypatch.setattr(adapter_warehouse, "PACK", 2)
    with AdapterWarehouse(on_spark.project) as wh:
        alone = list(wh.query_each(q.sql for q in _shared_queries(on_spark)))
        with _Statements() as sent:
            results = list(wh.query_shared(_shared_queries(on_spark, broken=1)))
        assert [isinstance(r, Exception) for r in results] == [False, True, False, False]
        assert "no_such_column" in str(results[1]) and [results[0], *results[2:]] == [alone[0], *alone[2:]]
        assert len(sent) == 2 + 2  # two statements, the failed one again as two
        wh.session.adapter.config.threads = 1  # one statement at a time: the next when the caller asks for it
        with _Statements() as sent:
            results = wh.query_shared(_shared_queries(on_spark))
            assert next(results) == alone[0]
            results.close()
        assert len(sent) == 1


def test_queries_packed_in_one_statement_read_back_as_each_alone(on_spark):
    """query_shared runs several queries in one statement (AdapterWarehouse._packed); each reads back as it does
    alone: the types Spark gives (a DECIMAL's digits, a TIMESTAMP to the microsecond, a DATE, NULLs), quotients in
    DOUBLEs, its rows in its order, its column names even with no rows, and a comment on its last line."""
    from dptool.project.adapter_warehouse import PACK
    from dptool.sql import SharedQuery

    values = ("(values (1, cast(2.50 as decimal(10, 2)), timestamp'2024-02-29 23:59:59.123456', date'2024-02-29', 'a'),"
              " (2, null, null, null, null), (3, cast(-0.01 as decimal(10, 2)), timestamp'1999-12-31 00:00:00',"
              " date'1970-01-01', 'c')) as t(i, d, ts, day, s)")
    sqls = [f"select * from {values} order by i desc",
            f"select d, d / 3 as third, avg(d) over () as mean, ts, day from {values} order by i",
            f"select s, count(*) as n from {values} where s is null group by s",
            f"select i from {values} where i > 3",  # no rows
            f"select i * 2 as twice from {values} order by twice -- the last line's comment",
            "select array(1, 2) as a, named_struct('x', cast(1.5 as double)) as st, cast(null as string) as nothing"]
    sqls = sqls * 3  # more than a statement holds: PACK to a statement
    with AdapterWarehouse(on_spark.project) as wh:
        alone = [wh.query(sql) for sql in sqls]
        with _Statements() as sent:
            packed = list(wh.query_shared(SharedQuery.plain(sql) for sql in sqls))
    assert packed == alone
    assert alone[0][1][2][2] == dt.datetime(2024, 2, 29, 23, 59, 59, 123456) and alone[1][1][0][1] == 2.5 / 3
    assert alone[3] == (["i"], [])
    # the statements of the packed queries, and one for each query with no rows (its column names)
    assert sum("\nunion all\n" in s for s in sent) == -(-len(sqls) // PACK) and len(sent) == -(-len(sqls) // PACK) + 3
