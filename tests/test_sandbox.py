"""The agent's SQL sandbox: each refusal with the error text the agent sees, and DuckDB's own second wall."""

from __future__ import annotations

import duckdb
import pytest

from dptool.evaluate.sandbox import Sandbox

ONLY = "run_sql takes exactly one read-only SELECT or WITH query"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    path = tmp_path_factory.mktemp("sandbox") / "warehouse.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create schema shop")
    con.execute("create table shop.orders as select range as id, range * 1.5 as amount, "
                "case when range % 2 = 0 then 'SP' else 'RJ' end as state from range(10)")
    con.close()
    (path.parent / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    return path


@pytest.fixture
def sandbox(warehouse):
    with Sandbox(warehouse, timeout=0.3, max_rows=3) as sb:
        yield sb


REFUSALS = {
    "insert": ("insert into shop.orders values (99, 1.0, 'SP')", f"error: refused: INSERT writes data; {ONLY}"),
    "update": ("update shop.orders set amount = 0", f"error: refused: UPDATE writes data; {ONLY}"),
    "delete": ("delete from shop.orders", f"error: refused: DELETE writes data; {ONLY}"),
    "truncate": ("truncate shop.orders", f"error: refused: TRUNCATE writes data; {ONLY}"),
    "write-in-cte": ("with x as (select 1) insert into shop.orders select * from x",
                     f"error: refused: INSERT writes data; {ONLY}"),
    "create": ("create table shop.t as select 1", f"error: refused: CREATE is DDL; {ONLY}"),
    "drop": ("drop table shop.orders", f"error: refused: DROP is DDL; {ONLY}"),
    "alter": ("alter table shop.orders add column x int", f"error: refused: ALTER is DDL; {ONLY}"),
    "attach": ("attach 'other.duckdb' as other", f"error: refused: ATTACH opens another database; {ONLY}"),
    "detach": ("detach warehouse", f"error: refused: DETACH opens another database; {ONLY}"),
    "copy": ("copy shop.orders to 'out.csv'", f"error: refused: COPY reads or writes files; {ONLY}"),
    "export": ("export database 'out'", f"error: refused: EXPORT reads or writes files; {ONLY}"),
    "pragma": ("pragma table_info('shop.orders')", f"error: refused: PRAGMA reads or changes settings; {ONLY}"),
    "set": ("set threads = 1", f"error: refused: SET changes a setting; {ONLY}"),
    "reset": ("reset threads", f"error: refused: RESET changes a setting; {ONLY}"),
    "install": ("install httpfs", f"error: refused: INSTALL installs or loads an extension; {ONLY}"),
    "load": ("load httpfs", f"error: refused: LOAD installs or loads an extension; {ONLY}"),
    "two-statements": ("select 1; select 2", f"error: refused: 2 statements; {ONLY} per call"),
    "empty": ("  -- nothing\n", f"error: refused: empty SQL; {ONLY}"),
    "read_csv": ("select * from read_csv('data.csv')",
                 "error: refused: table function read_csv() may read files, URLs or other SQL; "
                 "query the warehouse tables"),
    "read_parquet": ("select * from read_parquet('s3://bucket/x.parquet')",
                     "error: refused: table function read_parquet() may read files, URLs or other SQL; "
                     "query the warehouse tables"),
    "read_json_auto": ("select * from shop.orders o join read_json_auto('x.json') j on true",
                       "error: refused: table function read_json_auto() may read files, URLs or other SQL; "
                       "query the warehouse tables"),
    "glob": ("select * from glob('*')",
             "error: refused: table function glob() may read files, URLs or other SQL; query the warehouse tables"),
    "query-function": ("select * from query('select 1')",
                       "error: refused: table function query() may read files, URLs or other SQL; "
                       "query the warehouse tables"),
    "read_csv-in-subquery": ("select * from shop.orders where id in (select a from read_csv('data.csv'))",
                             "error: refused: table function read_csv() may read files, URLs or other SQL; "
                             "query the warehouse tables"),
    "file-string-table": ("select * from 'data.csv'",
                          "error: refused: 'data.csv' names a file or URL; query the warehouse tables"),
    "url-string-table": ("select * from 'https://example.com/x.parquet'",
                         "error: refused: 'https://example.com/x.parquet' names a file or URL; "
                         "query the warehouse tables"),
    "explain": ("explain select 1", f"error: refused: EXPLAIN is not a query; {ONLY}"),
    "checkpoint": ("checkpoint", f"error: refused: CHECKPOINT is not a query; {ONLY}"),
}


@pytest.mark.parametrize(("sql", "error"), list(REFUSALS.values()), ids=list(REFUSALS))
def test_refused_with_the_error_the_agent_sees(sandbox, sql, error):
    assert sandbox.run(sql) == error


def test_nothing_refused_was_written(sandbox, warehouse):
    for sql, _ in REFUSALS.values():
        sandbox.run(sql)
    assert sandbox.run("select count(*) as n, sum(amount) as total from shop.orders") == "n | total\n10 | 67.5\n(1 row)"
    assert not (warehouse.parent / "out.csv").exists()


def test_read_only_queries_run(sandbox):
    assert sandbox.run("with s as (select state, count(*) as n from shop.orders group by state) "
                       "select * from s order by state") == "state | n\nRJ | 5\nSP | 5\n(2 rows)"
    assert sandbox.run("select 1 as a union all select 2") == "a\n1\n2\n(2 rows)"
    assert sandbox.run("select count(*) as n from range(3)") == "n\n3\n(1 row)"
    assert sandbox.run("select count(*) as n from information_schema.columns where table_schema = 'shop'") == \
        "n\n3\n(1 row)"


def test_rows_are_capped(sandbox):
    assert sandbox.run("select id from shop.orders order by id") == \
        "id\n0\n1\n2\n(first 3 rows shown; the result has more: aggregate, filter or add LIMIT)"


def test_a_slow_query_is_stopped_at_the_time_limit(sandbox):
    assert sandbox.run("select sum(a.range * b.range) from range(100000) a, range(100000) b") == \
        "error: query stopped after 0.3 s (the time limit); make it cheaper: filter, aggregate or add LIMIT"
    assert sandbox.run("select 1 as still_usable") == "still_usable\n1\n(1 row)"


def test_database_errors_reach_the_agent_in_one_line(sandbox):
    out = sandbox.run("select * from shop.nope")
    assert out.startswith("error: Catalog Error: Table with name nope does not exist!") and "\n" not in out
    assert sandbox.run("selec 1").startswith("error: cannot parse SQL at line 1")


@pytest.mark.parametrize("sql", ["select * from read_csv('data.csv')", "select * from 'data.csv'",
                                 "attach 'other.duckdb' as other", "create table shop.t as select 1",
                                 "set threads = 1"], ids=["read_csv", "file-table", "attach", "create", "set"])
def test_duckdb_refuses_too_when_the_parser_is_bypassed(sandbox, warehouse, sql):
    with pytest.raises(duckdb.Error) as info:
        sandbox.con.execute(sql.replace("data.csv", str(warehouse.parent / "data.csv")))
    assert any(word in str(info.value) for word in ("disabled by configuration", "read-only", "locked"))


def test_schema_lists_every_table_with_its_columns(sandbox):
    assert sandbox.schema() == "- shop.orders(id BIGINT, amount DECIMAL(21,1), state VARCHAR)"
