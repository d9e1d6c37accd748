"""Beyond DuckDB: the subscriptions fixture end to end on a real PostgreSQL server, and the adapter path.

The PostgreSQL part needs a server: the one .ci/run starts (DPTOOL_PG_* variables), else one this module
starts on loopback with Debian's binaries (tests/postgres_server.py). Without either it skips, unless
DPTOOL_REQUIRE_POSTGRES=1 (CI), where it fails. The adapter-path tests run dptool's code that reads a
target through dbt's adapter against dbt-duckdb, so they run everywhere.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from decimal import Decimal
from pathlib import Path
from unittest import mock

import duckdb
import pytest

from dptool.project import semantic
from dptool.project.adapter_warehouse import AdapterWarehouse, export_from_adapter
from dptool.project.dbt import DbtProject
from dptool.project.warehouse import Warehouse, export_tables
from tests import postgres_server
from tests.subscriptions import GENERATE_ARGS, cli, copy_fixture, metric_sql, set_up

KEYS = ("DPTOOL_PG_HOST", "DPTOOL_PG_PORT", "DPTOOL_PG_USER", "DPTOOL_PG_PASSWORD", "DPTOOL_PG_DATABASE")


@pytest.fixture(scope="module")
def postgres():
    """Connection settings of a running server (CI's, or one started here), with a new database for this module."""
    folder = None
    if os.environ.get("DPTOOL_PG_PORT"):
        settings = {k: os.environ.get(k, "") for k in KEYS}
    else:
        folder = tempfile.mkdtemp(prefix="dptool-pg-")
        try:
            settings = postgres_server.start(folder)
        except (postgres_server.Unavailable, subprocess.TimeoutExpired, OSError) as exc:
            shutil.rmtree(folder, ignore_errors=True)
            if os.environ.get("DPTOOL_REQUIRE_POSTGRES") == "1":
                pytest.fail(f"DPTOOL_REQUIRE_POSTGRES=1 and no PostgreSQL server: {exc}")
            pytest.skip(f"no PostgreSQL server can be started here: {exc}")
    import psycopg2

    admin = dict(host=settings["DPTOOL_PG_HOST"], port=int(settings["DPTOOL_PG_PORT"]), user=settings["DPTOOL_PG_USER"],
                 password=settings["DPTOOL_PG_PASSWORD"] or None, dbname=settings["DPTOOL_PG_DATABASE"])
    database = f"dptool_test_{uuid.uuid4().hex[:8]}"
    con = psycopg2.connect(**admin)
    con.autocommit = True
    con.cursor().execute(f'create database "{database}"')
    con.close()
    yield {**settings, "DPTOOL_PG_DATABASE": database}
    con = psycopg2.connect(**admin)
    con.autocommit = True
    try:
        con.cursor().execute(f'drop database if exists "{database}" with (force)')  # PostgreSQL 13 and later
    except psycopg2.Error:
        con.cursor().execute(f'drop database if exists "{database}"')
    con.close()
    if folder:
        postgres_server.stop(folder)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def pg_run(postgres, tmp_path_factory):
    """`dptool init`, `dbt deps`, `dbt build --target pg`, `dptool generate --dbt-target pg` on a fixture copy."""
    root = copy_fixture(tmp_path_factory.mktemp("pg") / "project")
    with mock.patch.dict(os.environ, postgres):
        project = set_up(root, target="pg")
        manifest = json.loads(project.manifest_path.read_text(encoding="utf-8"))
        out = root / "bundle"
        proc = cli("generate", "--project-dir", str(root), "--dbt-target", "pg", "--out", str(out), *GENERATE_ARGS,
                   cwd=root)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        yield project, manifest, proc, out


def _pg(postgres: dict):
    import psycopg2

    return psycopg2.connect(host=postgres["DPTOOL_PG_HOST"], port=int(postgres["DPTOOL_PG_PORT"]),
                            user=postgres["DPTOOL_PG_USER"], password=postgres["DPTOOL_PG_PASSWORD"] or None,
                            dbname=postgres["DPTOOL_PG_DATABASE"])


def test_generate_on_postgres(pg_run):
    project, manifest, proc, out = pg_run
    assert manifest["metadata"]["adapter_type"] == "postgres"
    assert "semantic layer: 20 metrics translated, 3 skipped" in proc.stdout
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    sql_tasks = [t for t in tasks if t["gold_sql"]]
    assert len(sql_tasks) >= 40, proc.stdout
    assert len({t["metric_ids"][0] for t in sql_tasks}) >= 15
    assert any(t["rule_ids"] for t in sql_tasks)
    # gold_sql is DuckDB SQL over the bundle's tables (export re-ran every one and compared the rows)
    assert all('"subscriptions"."fct_' in t["gold_sql"] or '"subscriptions"."dim_' in t["gold_sql"] for t in sql_tasks)
    assert "public_analytics" not in (out / "tasks.jsonl").read_text(encoding="utf-8")


def test_the_warehouse_is_exported_from_postgres(pg_run, postgres):
    _, manifest, _, out = pg_run
    relations = {n["name"]: n["relation_name"] for n in manifest["nodes"].values() if n.get("relation_name")}
    con = duckdb.connect(str(out / "warehouse.duckdb"), read_only=True)
    pg = _pg(postgres)
    try:
        for table in ("dim_customers", "fct_invoices", "fct_subscriptions", "fct_trials"):
            cur = pg.cursor()
            cur.execute(f"select count(*) from {relations[table]}")
            expected = cur.fetchone()[0]
            assert con.execute(f'select count(*) from "subscriptions"."{table}"').fetchone()[0] == expected > 0
        types = dict(con.execute("select column_name, data_type from information_schema.columns "
                                 "where table_name = 'fct_invoices'").fetchall())
        assert types["amount_due"] == "DOUBLE" and types["invoiced_on"] == "DATE"
        assert types["is_internal_customer"] == "BOOLEAN" and types["invoice_id"] == "VARCHAR"
        cur = pg.cursor()
        cur.execute(f"select sum(amount_due), count(canceled_on) from {relations['fct_invoices']} i "
                    f"left join {relations['fct_subscriptions']} s using (subscription_id)")
        total, canceled = cur.fetchone()
        got = con.execute('select sum(amount_due), count(canceled_on) from "subscriptions"."fct_invoices" '
                          'left join "subscriptions"."fct_subscriptions" using (subscription_id)').fetchone()
        assert got[0] == pytest.approx(float(total), rel=1e-12) and got[1] == canceled
    finally:
        con.close()
        pg.close()


def test_every_metric_has_the_same_value_on_postgres_and_in_the_bundle(pg_run, postgres):
    """Each generated semantic-layer model, run on PostgreSQL and on the exported DuckDB file, agrees."""
    project, manifest, _, out = pg_run
    layer = semantic.read_layer(manifest, "subscriptions")
    folder = project.project_dir / "models" / "dptool_semantic"
    bundle_names = {n["relation_name"]: f'"subscriptions"."{n["alias"]}"' for n in manifest["nodes"].values()
                    if n.get("relation_name") and n["name"] in ("dim_customers", "fct_invoices", "fct_subscriptions",
                                                                "fct_trials")}
    con = duckdb.connect(str(out / "warehouse.duckdb"), read_only=True)
    pg = _pg(postgres)
    try:
        for name in sorted(layer.metrics):
            sql = metric_sql(name, layer, folder, manifest)
            cur = pg.cursor()
            cur.execute(sql)
            on_pg = cur.fetchone()[0]
            in_bundle = con.execute(re.sub("|".join(re.escape(k) for k in bundle_names),
                                           lambda x: bundle_names[x.group(0)], sql)).fetchone()[0]
            assert on_pg is not None, name
            assert float(in_bundle) == pytest.approx(float(on_pg), rel=1e-9), name
    finally:
        con.close()
        pg.close()


# --- the adapter path, on dbt-duckdb: runs without PostgreSQL ------------------------------------------------

@pytest.fixture
def duckdb_project(tmp_path) -> DbtProject:
    """A dbt project whose target is a DuckDB file holding one table of awkward types."""
    (tmp_path / "dbt_project.yml").write_text("name: tiny\nversion: '1.0'\nconfig-version: 2\nprofile: tiny\n",
                                              encoding="utf-8")
    (tmp_path / "profiles.yml").write_text(
        "tiny:\n  target: dev\n  outputs:\n    dev: {type: duckdb, path: tiny.duckdb, threads: 1}\n", encoding="utf-8")
    con = duckdb.connect(str(tmp_path / "tiny.duckdb"))
    con.execute("create schema shop")
    con.execute("""create table shop.orders as select * from (values
        (2, 'O''Brien, "Dublin"', 19.99::decimal(10, 2), date '2024-02-29', timestamptz '2024-03-01 10:00:00+00',
         true, null::integer, 9007199254740993::bigint),
        (1, e'two\\nlines', null, null, null, false, null, -1::bigint)
        ) as t(id, name, price, ordered_on, shipped_at, paid, nothing, big)""")
    con.close()
    return DbtProject(tmp_path)


def test_reading_a_target_through_its_dbt_adapter(duckdb_project):
    with AdapterWarehouse(duckdb_project) as wh:
        assert wh.dialect == "duckdb"
        names, rows = wh.query("select id, price, sum(price) over () as total from shop.orders order by id")
        assert names == ["id", "price", "total"]
        assert rows == [(1, None, 19.99), (2, 19.99, 19.99)]
        assert all(isinstance(r[2], float) for r in rows)  # decimals come back as floats, as DuckDB's doubles do
        with pytest.raises(Exception, match="query failed: .*no_such_table"):
            wh.query("select * from no_such_table")
    # the file is released: a plain DuckDB connection opens it again
    with Warehouse(duckdb_project.connection().path) as wh:
        assert wh.query("select count(*) from shop.orders")[1] == [(2,)]


def test_exporting_through_the_adapter_gives_what_a_duckdb_copy_gives(duckdb_project, tmp_path):
    connection = duckdb_project.connection()
    tables = [('"tiny"."shop"."orders"', "shop", "orders")]
    export_from_adapter(connection, tables, tmp_path / "via_adapter.duckdb")
    export_tables(connection.path, tables, tmp_path / "direct.duckdb")
    con = duckdb.connect(str(tmp_path / "via_adapter.duckdb"), read_only=True)
    try:
        rows = con.execute("select * from shop.orders").fetchall()
        types = [r[1] for r in con.execute("describe shop.orders").fetchall()]
    finally:
        con.close()
    # a column of NULLs only takes its type from the adapter's type name: dbt-duckdb names none, so VARCHAR
    assert types == ["BIGINT", "VARCHAR", "DOUBLE", "DATE", "TIMESTAMP", "BOOLEAN", "VARCHAR", "BIGINT"]
    assert rows == [
        (1, "two\nlines", None, None, None, False, None, -1),
        (2, 'O\'Brien, "Dublin"', 19.99, dt.date(2024, 2, 29), rows[1][4], True, None, 9007199254740993),
    ]
    assert isinstance(rows[1][4], dt.datetime) and rows[1][4].tzinfo is None  # wall-clock time, as gold rows read it
    con = duckdb.connect(str(tmp_path / "direct.duckdb"), read_only=True)
    try:  # the same values as a plain DuckDB copy, decimals aside
        direct = con.execute("select id, name, price, ordered_on, paid, big from shop.orders").fetchall()
    finally:
        con.close()
    assert [(r[0], r[1], float(r[2]) if isinstance(r[2], Decimal) else r[2], r[3], r[4], r[5]) for r in direct] == \
        [(r[0], r[1], r[2], r[3], r[5], r[7]) for r in rows]


def test_a_target_without_an_adapter_package(tmp_path):
    (tmp_path / "dbt_project.yml").write_text("name: tiny\nversion: '1.0'\nconfig-version: 2\nprofile: tiny\n",
                                              encoding="utf-8")
    (tmp_path / "profiles.yml").write_text(
        "tiny:\n  target: dev\n  outputs:\n    dev: {type: nosuchdb, host: x, threads: 1}\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"cannot load the profile|no dbt adapter for 'nosuchdb'"):
        Warehouse.of(DbtProject(tmp_path).connection())


def test_the_fixture_profile_reads_the_server_settings():
    """What CI exports is what the fixture's `pg` target reads (so `--dbt-target pg` finds CI's server)."""
    text = (Path(__file__).parent / "fixtures" / "subscriptions" / "profiles.yml").read_text(encoding="utf-8")
    for key in KEYS:
        assert f"env_var('{key}'" in text
