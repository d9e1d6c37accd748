"""Model texts compiled by dbt in batches: each text's SQL is what dbt writes when it compiles the text alone."""

from __future__ import annotations

import shutil

import duckdb
import pytest
import sqlglot

from dptool.errors import DptoolError
from dptool.project import batch
from dptool.project.batch import BATCH_DIR, compile_texts
from dptool.project.warehouse import Warehouse

HEADER = "-- a model text\n{{ config(materialized='table', schema='dptool_gold', tags=['dptool_gold']) }}\n"
TEXTS = {
    # an ecommerce metric over one ephemeral chain, with a rule and a slice whose literal holds a quote
    "t_0001": HEADER + "{{ dptool.gold(metric=\"avg_delivery_days\", rules=[\"outlier_exclusion\"], "
                       "where=[\"customer_state = 'SP'\"], group_by=[\"customer_city\"], shape=\"grouped\") }}\n",
    # a banking metric whose ephemeral model reads two more (nested injection, hoisted by dbt)
    "t_0002": HEADER + "{{ dptool.gold(metric=\"dscr\", rules=[\"prague_income_haircut\"], "
                       "where=[\"A3 = 'Prague'\"], shape=\"value\") }}\n",
    "t_0003": HEADER + "{{ dptool.gold(metric=\"avg_delivery_days\", rules=[], shape=\"value\") }}\n",
    # no ephemeral model: nothing injected
    "t_0004": "select count(*) as n from {{ ref('orders') }}\n-- a line comment at the end swallows no parenthesis",
    "t_0005": "with x as (select 1 as v)\nselect * from x",
    # a literal that closes a block comment and ends a statement: its batch is compiled again, text by text
    "t_0006": HEADER + "{{ dptool.gold(metric=\"avg_delivery_days\", rules=[], where=[\"customer_city <> 'a*/; b'\"], "
                       "shape=\"value\") }}\n",
}


def compile_alone(project, texts: dict[str, str]) -> dict[str, str]:
    """What `dbt compile` writes for each text as a model of its own."""
    folder = project.project_dir / "models" / "dptool_test_alone"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    try:
        for name, text in texts.items():
            (folder / f"alone_{name}.sql").write_text(text, encoding="utf-8")
        results = project.run("compile", "--select", *[f"alone_{n}" for n in texts], "--no-write-json",
                              "--no-populate-cache")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {r.name.removeprefix("alone_"): r.compiled_code for r in results}


def test_each_text_is_what_dbt_writes_for_it_alone(demo_project, monkeypatch):
    monkeypatch.setattr(batch, "BATCH_SIZE", 3)  # two batches: texts of several metrics share one
    done = []
    compiled = compile_texts(demo_project, TEXTS, on_batch_done=done.append)
    alone = compile_alone(demo_project, TEXTS)
    assert sorted(done) == [3, 3]
    for name in TEXTS:
        assert compiled[name].error is None
        assert compiled[name].sql.strip() == alone[name].strip(), name
    # dscr reads its own ephemeral model and, through it, two more: all three, in dbt's order
    assert [n for n, _ in compiled["t_0002"].injected] == [
        "__dbt__cte__int_banking_loans", "__dbt__cte__int_banking_loan_risk", "__dbt__cte__dscr"]
    assert compiled["t_0004"].injected == () and compiled["t_0004"].own_sql == compiled["t_0004"].sql
    assert not (demo_project.project_dir / BATCH_DIR).exists()


def test_a_text_gets_the_order_it_has_alone_whatever_shares_its_batch(demo_project):
    # a component's task first: the batch injects active_sellers' models before gmv's, while the composite alone
    # reads gmv first (issue 24: the order of a gold_sql's CTEs once followed the batch, so the same task compiled
    # to another text when other tasks joined the run)
    texts = {
        "a": HEADER + "{{ dptool.gold(metric=\"active_sellers\", rules=[], shape=\"value\") }}\n",
        "b": HEADER + "{{ dptool.gold(metric=\"gmv_per_active_seller\", rules={\"gmv_per_active_seller\": [], "
                      "\"gmv\": [], \"active_sellers\": []}, shape=\"value\") }}\n",
    }
    together, alone = compile_texts(demo_project, texts), compile_alone(demo_project, texts)
    for name in texts:
        assert together[name].sql.strip() == alone[name].strip(), name
    by_itself = compile_texts(demo_project, {"b": texts["b"]})
    assert by_itself["b"].sql == together["b"].sql


def test_a_text_that_fails_gets_the_error_and_the_others_compile(demo_project, monkeypatch):
    # dbt stops at the failing batch: the batches done before it are read back, the others compiled again
    monkeypatch.setattr(batch, "BATCH_SIZE", 2)
    texts = {**TEXTS, "t_0009": HEADER + "{{ dptool.gold(metric=\"dscr\", rules=[\"not_a_rule\"]) }}\n",
             "t_0010": TEXTS["t_0003"]}
    done = []
    compiled = compile_texts(demo_project, texts, on_batch_done=done.append)
    assert list(compiled) == list(texts) and sum(done) == len(texts)
    assert "rule macro 'rule__not_a_rule' not found" in compiled["t_0009"].error
    assert compiled["t_0009"].error.startswith("Compilation Error in model t_0009 dptool: ")  # the text, one line
    alone = compile_alone(demo_project, TEXTS)
    assert {n: compiled[n].sql.strip() for n in TEXTS} == {n: sql.strip() for n, sql in alone.items()}
    assert compiled["t_0010"].sql == compiled["t_0003"].sql
    assert not (demo_project.project_dir / BATCH_DIR).exists()


def test_batches_that_read_the_same_ephemeral_models_compile_each_one_once(demo_project, demo_manifest):
    # dbt-core 1.11 on two threads injected an ephemeral model that both batches reached at once with its own
    # CTEs inside (a WITH in a CTE's place: a syntax error), in most runs of these 200 texts (CI's failure)
    metrics = sorted(n["name"] for n in demo_manifest["nodes"].values()
                     if n["resource_type"] == "model" and "/metrics/" in n["original_file_path"])
    texts = {f"t_{i:04d}": f"select * from {{{{ ref('{metrics[i % len(metrics)]}') }}}}" for i in range(200)}
    for _ in range(3):
        for name, c in compile_texts(demo_project, texts).items():
            assert c.error is None and c.injected, name
            for cte, body in c.injected:
                assert not body.lstrip().startswith(f"with {batch.CTE_PREFIX}"), (name, cte)
            sqlglot.parse_one(c.sql, read="duckdb")


def test_nothing_to_compile_runs_no_dbt(demo_project):
    before = demo_project.dbt_seconds
    assert compile_texts(demo_project, {}) == {}
    assert demo_project.dbt_seconds == before


def test_cut_finds_lost_markers():
    with pytest.raises(batch._Lost):
        batch._cut("with x as (select 1) select 1", 1, "abc", plain=False)
    with pytest.raises(batch._Lost):
        batch._cut("with x as (select 1) select 1", 1, "abc", plain=True)


def test_inject_writes_ctes_as_dbt_does():
    ctes = (("__dbt__cte__a", "select 1 as v"), ("__dbt__cte__b", "select v from __dbt__cte__a"))
    assert batch._inject("-- c\nwith x as (select * from __dbt__cte__b) select * from x", ctes) == (
        "-- c\nwith  __dbt__cte__a as (\nselect 1 as v\n),  __dbt__cte__b as (\nselect v from __dbt__cte__a\n), "
        "x as (select * from __dbt__cte__b) select * from x")
    assert batch._inject("select * from __dbt__cte__a", ctes[:1]) == (
        "with __dbt__cte__a as (\nselect 1 as v\n) select * from __dbt__cte__a")
    # only what a text reads, and what that reads
    assert batch._needed("select * from __dbt__cte__b", ctes) == ctes
    assert batch._needed("select * from __dbt__cte__a", ctes) == ctes[:1]


def test_query_each_keeps_the_order_and_each_error(tmp_path):
    path = tmp_path / "w.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create table t as select range as i from range(1000)")
    con.close()
    queries = [f"select sum(i) + {k} as s from t" for k in range(20)]
    queries[7] = "select no_such_column from t"
    with Warehouse(path) as wh:
        results = list(wh.query_each(queries))
    assert isinstance(results[7], DptoolError) and "no_such_column" in str(results[7])
    assert [r for i, r in enumerate(results) if i != 7] == [
        (["s"], [(499500 + k,)]) for k in range(20) if k != 7]
