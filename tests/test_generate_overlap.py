"""The reproduction of each round's gold_sql on the bundle's warehouse, run on a thread while the next round compiles:
the same outcome as the reproduction run in sequence at export, whatever ran when; stopped and removed on an error.
And the ephemeral models the probes and every round's queries inline, computed once per run."""

from __future__ import annotations

import json
import time
from pathlib import Path

import duckdb
import pytest

from dptool.errors import DptoolError
from dptool.generate.export import Reproduction, reproduce, write_bundle
from dptool.generate.pipeline import generate
from dptool.outdir import BUNDLE, check_replaceable
from dptool.project import warehouse
from dptool.project.catalog import Catalog, Table
from dptool.project.dbt import Connection
from dptool.project.warehouse import Warehouse
from dptool.sql import SharedQuery
from tests.subscriptions import GENERATE_ARGS, copy_fixture, set_up

SLOW = "select count(*) as n from range(10000000000) a where a.range % 7 = 3"


@pytest.fixture()
def source(tmp_path) -> tuple[Path, Catalog]:
    """A target's DuckDB file with one agent-visible table, and the catalog that names it."""
    path = tmp_path / "target.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create table orders as select * from (values (1, 2.0::double), (2, 3.0), (3, 4.0)) t(id, amount)")
    con.close()
    table = Table("model.shop.orders", "orders", "shop", "main.orders", "", {})
    return path, Catalog("shop", "", tables={table.unique_id: table})


def _task(task_id: str, sql: str | None) -> dict:
    return {"task_id": task_id, "gold_sql": sql, "dbt_node": f"model.shop.{task_id}"}


TASKS = [_task("t_0001", "select count(*) as n from shop.orders"),
         _task("t_0002", "select sum(amount) as s from shop.orders"),
         _task("t_0003", "select max(id) as m from shop.orders"),
         _task("t_0004", None)]  # a knowledge task: nothing to reproduce
RIGHT = {"t_0001": [(3,)], "t_0002": [(9.0,)], "t_0003": [(3,)]}


def _sequential_error(tmp_path: Path, catalog: Catalog, source_path: Path, tasks: list[dict], rows: dict) -> str:
    """What export's reproduction in sequence says of these tasks on the same warehouse."""
    from dptool.generate.export import bundle_tables
    from dptool.project.warehouse import export_tables

    path = tmp_path / "sequential.duckdb"
    export_tables(source_path, bundle_tables(catalog), path)
    with pytest.raises(DptoolError) as raised:
        reproduce(path, tasks, rows)
    return str(raised.value)


def test_rounds_reproduced_on_the_thread_fail_as_the_sequence_does_on_the_first_task_in_order(tmp_path, source):
    source_path, catalog = source
    wrong = {**RIGHT, "t_0002": [(8.0,)], "t_0003": [(4,)]}
    with Reproduction(tmp_path / "bundle", catalog, source_path) as staged:
        staged.submit([TASKS[2]], wrong)  # a later task's round first: the error is still the first task's in order
        staged.submit(TASKS[:2], wrong)
        with pytest.raises(DptoolError) as raised:
            staged.check(TASKS, wrong)
    assert str(raised.value) == _sequential_error(tmp_path, catalog, source_path, TASKS, wrong)
    assert str(raised.value).startswith("model.shop.t_0002: gold_sql on the bundle's warehouse gives [(9.0,)]")
    assert not list(tmp_path.glob(".bundle.*"))  # closed: the staging folder is gone


def test_a_task_dropped_after_its_round_or_changed_since_is_judged_as_the_bundle_keeps_it(tmp_path, source):
    source_path, catalog = source
    with Reproduction(tmp_path / "bundle", catalog, source_path) as staged:
        dropped = _task("t_0009", "select 1 as one from no_such_table")  # e.g. a duplicate question, dropped later
        staged.submit([*TASKS, dropped], {**RIGHT, "t_0001": [(4,)], "t_0009": [(1,)]})
        staged.check(TASKS, RIGHT)  # t_0001 is run again with the rows it has now: no error


def test_the_staging_folder_becomes_the_bundle_with_its_warehouse_reproduced(tmp_path, source):
    source_path, catalog = source
    out = tmp_path / "bundle"
    with Reproduction(out, catalog, source_path) as staged:
        staged.submit(TASKS, RIGHT)
        folder = staged.folder
        write_bundle(out, catalog=catalog, source_db=str(source_path), tasks=TASKS, gold_rows=RIGHT,
                     graph_json="{}", card="# card\n", staged=staged)
    assert not folder.exists() and check_replaceable(out, BUNDLE) == out
    assert [json.loads(line)["task_id"] for line in (out / "tasks.jsonl").read_text().splitlines()] == \
        [t["task_id"] for t in TASKS]
    con = duckdb.connect(str(out / "warehouse.duckdb"), read_only=True)
    assert con.execute("select count(*) from shop.orders").fetchall() == [(3,)]
    con.close()
    assert not list(tmp_path.glob(".bundle.*"))


def test_closed_while_a_round_runs_its_queries_stop_and_nothing_is_left(tmp_path, source):
    source_path, catalog = source
    staged = Reproduction(tmp_path / "bundle", catalog, source_path)
    staged.submit([_task("t_0001", SLOW), _task("t_0002", SLOW)], {"t_0001": [(1,)], "t_0002": [(1,)]})
    staged.submit([_task("t_0003", SLOW)], {"t_0003": [(1,)]})  # waits for the thread: never started
    time.sleep(0.5)
    start = time.perf_counter()
    staged.close()
    assert time.perf_counter() - start < 10
    assert not staged.folder.exists() and not list(tmp_path.glob(".bundle.*"))


def _rounded(rows: list[tuple]) -> list[str]:
    """Rows as comparable text, in any order, doubles to 9 digits (DuckDB sums in thread order)."""
    return sorted(repr(tuple(float(f"{v:.9g}") if isinstance(v, float) else v for v in r)) for r in rows)


@pytest.fixture(scope="module")
def subscriptions(tmp_path_factory):
    root = copy_fixture(tmp_path_factory.mktemp("overlap") / "project")
    set_up(root)
    return root


def test_generate_counts_what_each_step_ran_and_kept(subscriptions, tmp_path):
    target = int(GENERATE_ARGS[GENERATE_ARGS.index("--target") + 1])
    result = generate(subscriptions, tmp_path / "bundle", target_tasks=target, min_per_type=0, echo=lambda _: None,
                      progress=False, rules_dir=subscriptions / "business_rules")
    counts = result.counts
    sql_tasks = [t for t in result.tasks if t["gold_sql"]]
    assert list(counts) == ["probed", "gold_compiled", "gold_run", "support_run", "validated", "kept", "rounds"]
    assert counts["kept"] == len(sql_tasks) > 0
    assert counts["gold_compiled"] == result.gold_models >= counts["gold_run"] >= counts["support_run"] \
        >= counts["validated"] >= counts["kept"]
    assert counts["rounds"] == 1 and counts["probed"] > 0  # --min-per-type 0: no augment round
    # every kept task's gold_sql was reproduced on the bundle's warehouse: its rows are those the task reads
    con = duckdb.connect(str(result.bundle / "warehouse.duckdb"), read_only=True)
    for task in sql_tasks:
        columns, rows = result.rows[task["task_id"]]
        gold = [r[1:] for r in rows if r[columns.index("variant")] == "gold"]
        assert _rounded(con.execute(task["gold_sql"]).fetchall()) == _rounded(gold), task["task_id"]
    con.close()
    assert not list(tmp_path.glob(".bundle.*"))


def _shared(k: int) -> SharedQuery:
    """A query reading the CTE every one of them shares (an ephemeral model, as dbt injects it)."""
    return SharedQuery((("__dbt__cte__big", "select sum(amount) as s from main.orders"),),
                       lambda ctes: f"with {ctes[0][0]} as ({ctes[0][1]}) select s + {k} as v from {ctes[0][0]}")


def _tables(wh: Warehouse) -> list[str]:
    return [n for (n,) in wh.con.execute("select table_name from duckdb_tables() where database_name = 'memory' "
                                         "order by 1").fetchall()]


def test_while_kept_each_shared_cte_is_computed_once_over_every_call(source):
    source_path, _ = source
    connection = Connection("duckdb", str(source_path))
    with Warehouse.keeping(connection):
        with Warehouse.of(connection) as wh:  # the probes' call
            assert [r[1] for r in wh.query_shared([_shared(1), _shared(2)])] == [[(10.0,)], [(11.0,)]]
            made = _tables(wh)
        assert len(made) == 1
        with Warehouse.of(connection) as again:  # a round's gold queries: the same warehouse, its table read
            assert again is wh
            assert [r[1] for r in again.query_shared([_shared(3)])] == [[(12.0,)]]
            assert _tables(again) == made
    with pytest.raises(duckdb.Error):  # closed with the block
        wh.con.execute("select 1")
    with Warehouse.of(connection) as alone:  # outside it: computed for the call, dropped after it
        assert [r[1] for r in alone.query_shared([_shared(1), _shared(2)])] == [[(10.0,)], [(11.0,)]]
        assert _tables(alone) == []


def test_past_the_budget_a_calls_tables_go_when_it_is_done(source, monkeypatch):
    source_path, _ = source
    connection = Connection("duckdb", str(source_path))
    monkeypatch.setattr(warehouse, "KEPT_BYTES", 0)  # no room: memory stays bounded whatever the data's size
    with Warehouse.keeping(connection), Warehouse.of(connection) as wh:
        assert [r[1] for r in wh.query_shared([_shared(1), _shared(2)])] == [[(10.0,)], [(11.0,)]]
        assert _tables(wh) == []
        assert [r[1] for r in wh.query_shared([_shared(3)])] == [[(12.0,)]]
        assert _tables(wh) == []
