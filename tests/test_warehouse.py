"""Warehouse.query_shared on small DuckDB files: the rows of each query's text, each shared CTE computed once."""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pytest

from dptool.errors import DptoolError
from dptool.project.warehouse import Warehouse
from dptool.sql import SharedQuery


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create schema sales")
    con.execute("create table sales.orders as select range as id, range % 3 as store, range * 1.5 as amount "
                "from range(30)")
    con.close()
    return path


class Recorder:
    """Queries whose assemble records the CTE bodies it is given: what query_shared ran in place of each."""

    def __init__(self):
        self.given: list[dict[str, str]] = []  # in the order the queries were given (threads run them in any order)

    def query(self, ctes: list[tuple[str, str]], own: str) -> SharedQuery:
        self.given.append({})
        at = len(self.given) - 1

        def assemble(bodies):
            self.given[at] = dict(bodies)
            return "with " + ", ".join(f"{n} as (\n{b}\n)" for n, b in bodies) + "\n" + own
        return SharedQuery(tuple(ctes), assemble)


BIG = ("big", "select store, sum(amount) as total from sales.orders group by store")
RANKED = ("ranked", "select store, total, rank() over (order by total desc) as r from big")


def test_each_query_gives_the_rows_of_its_text_and_a_shared_cte_is_computed_once(db):
    rec = Recorder()
    queries = [rec.query([BIG, RANKED], f"select store, total from ranked where r = {k}") for k in (1, 2, 3)]
    queries.append(rec.query([("once", "select max(id) as m from sales.orders")], "select m from once"))
    with Warehouse(db) as wh:
        expected = [wh.query(q.sql) for q in queries]  # q.sql: the text with every CTE as written
        assert list(wh.query_shared(queries)) == expected
        # what stays of the shared CTEs once every reader is done: nothing
        assert wh.query("select count(*) from duckdb_tables() where database_name = 'memory'")[1] == [(0,)]
    shared = rec.given[:3]
    tables = {given["ranked"] for given in shared}
    assert len(tables) == 1 and tables.pop().startswith("select * from memory.main.dptool_shared_")
    assert len({given["big"] for given in shared}) == 1 and shared[0]["big"] != BIG[1]
    assert rec.given[3] == {"once": "select max(id) as m from sales.orders"}  # read by one query: left as it is


def test_a_cte_that_only_picks_and_filters_rows_stays_in_each_query_one_that_aggregates_over_it_is_computed_once(db):
    # a table of a row-by-row CTE copies every row it reads (8.8M transactions: a GiB) to save a scan, no work
    picked = ("picked", "select id, store, amount * 2 as doubled from sales.orders where id % 2 = 0")
    summed = ("summed", "select store, sum(doubled) as total from picked group by store")
    rec = Recorder()
    queries = [rec.query([picked, summed], f"select total from summed where store = {s}") for s in (0, 1, 2)]
    with Warehouse(db) as wh:
        expected = [wh.query(q.sql) for q in queries]
        assert list(wh.query_shared(queries)) == expected
    assert [given["picked"] for given in rec.given] == [picked[1]] * 3
    assert len({given["summed"] for given in rec.given}) == 1
    assert rec.given[0]["summed"].startswith("select * from memory.main.dptool_shared_")


def test_a_cte_of_the_same_name_and_body_over_different_earlier_ctes_is_not_shared(db):
    rec = Recorder()
    small = ("big", "select store, sum(amount) as total from sales.orders where id < 10 group by store")
    queries = [rec.query([BIG, RANKED], "select total from ranked where r = 1"),
               rec.query([small, RANKED], "select total from ranked where r = 1")]
    with Warehouse(db) as wh:
        rows = [r[1] for r in wh.query_shared(queries)]
    assert rows == [[(Decimal("232.5"),)], [(Decimal("27.0"),)]]
    assert [given["ranked"] for given in rec.given] == [RANKED[1], RANKED[1]]


def test_a_shared_cte_whose_column_names_repeat_reads_as_in_its_text(db):
    # DuckDB names a repeated column of a CTE as its table names it (id, id_1): the rows and names are the same
    twice = ("twice", "select id, id from sales.orders where id < 3")
    queries = [Recorder().query([twice], f"select * from twice where id <> {k} order by 1") for k in range(2)]
    with Warehouse(db) as wh:
        expected = [wh.query(q.sql) for q in queries]
        assert list(wh.query_shared(queries)) == expected
    assert expected[0][0] == ["id", "id_1"]


def test_a_shared_cte_that_fails_fails_each_of_its_queries_with_the_error_of_its_text(db):
    broken = ("broken", "select no_such_column from sales.orders")
    queries = [SharedQuery((broken,), lambda b: f"with {b[0][0]} as ({b[0][1]}) select * from broken")] * 2
    with Warehouse(db) as wh:
        results = list(wh.query_shared(queries))
    assert all(isinstance(r, DptoolError) and "no_such_column" in str(r) for r in results)


def test_a_file_named_like_duckdbs_own_database_is_read_without_sharing(db, tmp_path):
    memory = tmp_path / "memory.duckdb"
    db.rename(memory)
    rec = Recorder()
    queries = [rec.query([BIG], f"select total from big where store = {s}") for s in (0, 1)]
    with Warehouse(memory) as wh:
        assert [r[1] for r in wh.query_shared(queries)] == [[(Decimal("202.5"),)], [(Decimal("217.5"),)]]
    assert all(given["big"] == BIG[1] for given in rec.given)
