"""A rule that sets a column to a constant (`q.columns.update({'status': "'paid'"})`) leaves no question that
slices, groups or windows by that column where the rule is in force: the slice would hold every row or none.
Rules that redefine a column by an expression of columns (the demo's lead category, junior card) keep theirs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dptool.generate.ids import Ids
from dptool.generate.instantiate import constant_notes, instantiate
from dptool.generate.refresh import reasked
from dptool.generate.sample import Skeleton
from dptool.project.catalog import load_catalog
from dptool.project.rule_columns import constant_columns
from tests.test_instantiate import ORDERED_AT, PROFILES, STATE, STATUS

REPO = Path(__file__).resolve().parent.parent
SHOP = Path(__file__).parent / "fixtures" / "shop_manifest.json"
TYPES = ("point_query", "threshold_crossing", "comparison", "decomposition", "ranking", "counterfactual")


def shop(paid_sql: str = "", capital_sql: str = ""):
    manifest = json.loads(SHOP.read_text(encoding="utf-8"))
    manifest["macros"]["macro.shop.rule__paid_definition"]["macro_sql"] = paid_sql
    manifest["macros"]["macro.shop.rule__capital_override"]["macro_sql"] = capital_sql
    return load_catalog(manifest)


def made(catalog, skeleton: Skeleton, types: tuple[str, ...] = TYPES) -> list:
    return instantiate([skeleton], catalog, PROFILES, seed=1, dialect="duckdb", types=types)


@pytest.mark.parametrize(("sql", "columns"), [
    ("{% do q.columns.update({'status': \"'paid'\"}) %}", ("status",)),
    ("{% do q.columns.update({'date': '930301'}) %}", ("date",)),
    ("{% do q.columns.update({\"status\": 'null', 'amount': 'amount * 0.9'}) %}", ("status",)),
    ("{% do q.columns.update({'product_category_name_english': 'lead_product_category'}) %}", ()),
    ("{% do q.columns.update({'type': 'case when ' ~ prev ~ \" = 'junior' then 'classic' end\"}) %}", ()),
    ("{% do q.columns.update({col: \"'x'\"}) %}", ()),
    ("{% do q.where.append(\"status = 'paid'\") %}", ()),
])
def test_the_columns_a_rule_sets_to_a_constant(sql, columns):
    assert constant_columns(sql) == columns


def test_no_demo_rule_sets_a_column_to_a_constant():
    rules = sorted((REPO / "macros").rglob("rule__*.sql"))
    assert len(rules) > 20
    assert [p.name for p in rules if constant_columns(p.read_text(encoding="utf-8"))] == []


def test_a_slice_or_group_on_a_column_the_rule_sets_to_a_constant_is_not_asked():
    skeleton = Skeleton("paid_rate", STATUS, "categorical", ("paid_definition",), ("model.shop.orders",))
    assert made(shop(), skeleton)  # the rule as it is: questions by order status
    catalog = shop("{% macro rule__paid_definition(metric, q) %}{% do q.columns.update({'status': \"'paid'\"}) %}"
                   "{{ return(q) }}{% endmacro %}")
    assert catalog.rules["paid_definition"].constants == ("status",)
    assert made(catalog, skeleton) == []
    assert constant_notes(catalog) == [
        "note: rule paid_definition sets status to a constant: no question slices, groups or windows paid_rate by "
        "it where the rule is in force"]


def test_a_window_on_a_time_column_the_rule_sets_to_a_constant_is_not_asked():
    skeleton = Skeleton("paid_rate", ORDERED_AT, "temporal", ("paid_definition",), ("model.shop.orders",))
    assert made(shop(), skeleton, ("trend_analysis",))
    assert made(shop("{% do q.columns.update({'ordered_at': \"date '2018-01-01'\"}) %}"), skeleton,
                ("trend_analysis",)) == []


def test_a_counterfactual_base_applies_every_governing_rule():
    # withdrawing capital_override: the base still applies it, and it sets the sliced column
    skeleton = Skeleton("avg_order_value", STATE, "spatial", ("exclude_tests",),
                        ("model.shop.customers", "model.shop.orders", "model.shop.payments"))
    assert made(shop(), skeleton, ("counterfactual",))
    assert made(shop(capital_sql="{% do q.columns.update({'state': \"'DF'\"}) %}"), skeleton,
                ("counterfactual",)) == []


def test_a_refresh_does_not_ask_again_a_question_the_rule_now_makes_constant():
    old = {"task_id": "pq_1", "analysis_type": "point_query", "domain": "sales", "metric_ids": ["paid_rate"],
           "rule_ids": ["paid_definition"], "rule_scope": "all", "dimension": "status", "slice": {"status": "paid"},
           "spec": {"where": ["status = 'paid'"], "group_by": [], "shape": "value"}}
    made, unaskable = reasked([old], shop(), PROFILES, Ids())
    assert len(made) == 1 and not unaskable
    made, unaskable = reasked([old], shop("{% do q.columns.update({'status': \"'paid'\"}) %}"), PROFILES, Ids())
    assert made == [] and list(unaskable.values()) == [
        "the rule paid_definition sets status, which it slices, groups or windows by, to a constant"]
