"""Model texts compiled by dbt and their SQL run: on a warehouse that keeps its shared CTEs, each batch's queries
run while dbt compiles the next batches, and give what they give when run after the compile."""

from __future__ import annotations

import threading
import time

import pytest

from dptool.project import batch
from dptool.project.compile_run import compiled_and_run
from dptool.project.warehouse import Warehouse

HEADER = "{{ config(materialized='table', schema='dptool_gold', tags=['dptool_gold']) }}\n"
TEXTS = {
    "t_1": HEADER + "{{ dptool.gold(metric=\"avg_delivery_days\", rules=[], group_by=[\"customer_state\"], "
                    "shape=\"grouped\") }}\n",
    "t_2": HEADER + "{{ dptool.gold(metric=\"avg_delivery_days\", rules=[\"outlier_exclusion\"], shape=\"value\") }}\n",
    "t_3": "select count(*) as n from {{ ref('orders') }}",
    "t_4": "select {{ no_such_macro() }} as n",  # does not compile
    "t_5": "select no_such_column from {{ ref('orders') }}",  # compiles; its query fails
    "t_6": HEADER + "{{ dptool.gold(metric=\"dscr\", rules=[], shape=\"value\") }}\n",
    "t_7": "select 1 as not_run",
}
RUN = ["t_1", "t_2", "t_3", "t_4", "t_5", "t_6"]


def _all(project, warehouse) -> tuple[dict, dict]:
    with compiled_and_run(project, TEXTS, warehouse, RUN) as ran:
        results = {n: ran.result(n) for n in reversed(RUN) if ran.compiled[n].sql is not None}  # any order
    # an error as its text; rows in order (a query without ORDER BY gives its groups in any)
    plain = {n: str(r) if isinstance(r, Exception) else (r[0], sorted(r[1])) for n, r in results.items()}
    return {n: c.error is None for n, c in ran.compiled.items()}, plain


def test_queries_run_while_dbt_compiles_give_what_they_give_after_it(demo_project, monkeypatch):
    monkeypatch.setattr(batch, "BATCH_SIZE", 2)
    connection = demo_project.connection()
    with Warehouse(connection.path) as plain:
        assert not plain.keeps_shared
        after = _all(demo_project, plain)
    with Warehouse.keeping(connection):
        wh = Warehouse.of(connection)
        assert wh.keeps_shared
        during = _all(demo_project, wh)
    assert during == after
    compiled, results = during
    assert compiled == {"t_1": True, "t_2": True, "t_3": True, "t_4": False, "t_5": True, "t_6": True, "t_7": True}
    assert "no_such_column" in str(results.pop("t_5"))
    assert all(isinstance(r, tuple) and r[1] for r in results.values())
    assert results["t_3"][0] == ["n"]


def test_the_first_batch_runs_before_dbt_has_compiled_the_last(demo_project, monkeypatch):
    """When dbt finishes the last batch, the first batch's queries have made their CTE tables already."""
    monkeypatch.setattr(batch, "BATCH_SIZE", 2)
    texts = {n: TEXTS[n] for n in ("t_1", "t_2", "t_3", "t_6", "t_7")}
    connection = demo_project.connection()
    seen = []
    with Warehouse.keeping(connection):
        wh = Warehouse.of(connection)
        look = wh.con.cursor()

        def batch_done(n: int) -> None:
            seen.append(n)
            if sum(seen) < len(texts):
                return
            deadline = time.monotonic() + 60
            while not _memory_tables(look) and time.monotonic() < deadline:
                time.sleep(0.05)
            seen.append(_memory_tables(look))

        with compiled_and_run(demo_project, texts, wh, texts.keys(), on_batch_done=batch_done) as ran:
            assert ran.result("t_1")[1]
    assert seen[:3] == [2, 2, 1] and seen[3] > 0  # tables of the shared CTEs, made while dbt still compiled


def _memory_tables(cursor) -> int:
    return cursor.execute("select count(*) from duckdb_tables() where database_name = 'memory'").fetchone()[0]


def test_leaving_the_block_stops_the_queries_and_their_thread(demo_project):
    connection = demo_project.connection()
    with Warehouse.keeping(connection):
        wh = Warehouse.of(connection)
        with pytest.raises(RuntimeError, match="stop"), compiled_and_run(demo_project, TEXTS, wh, RUN):
            raise RuntimeError("stop")
    assert not [t for t in threading.enumerate() if t.name == "dptool-compiled-sql"]
