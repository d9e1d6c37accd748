"""Stage 5: the gold model of each candidate and the properties file beside them."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import jinja2
import pytest
import yaml
from jinja2 import nodes

from dptool.catalog import load_catalog
from dptool.dbt import DbtProject
from dptool.instantiate import Candidate, Window
from dptool.materialize import GOLD_DIR, GOLD_TAG, model_sql, properties, write_properties
from dptool.sample import Skeleton
from dptool.sql import equals, in_window

FIXTURES = Path(__file__).parent / "fixtures"
SHOP = load_catalog(json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8")))
TABLES = ("model.shop.customers", "model.shop.orders", "model.shop.payments")
Q3_2017 = Window(date(2017, 7, 1), date(2017, 10, 1), "Q3 2017")
H2_2017 = Window(date(2017, 7, 1), date(2018, 1, 1), "the second half of 2017")
QUESTION = "What was our Average Order Value for city Sant'Ana in Q3 2017? Give the answer in BRL."


def window_slice(w: Window) -> dict:
    return {"start": w.start.isoformat(), "end": w.end.isoformat(), "label": w.label}


def point_query(city: str = "Sant'Ana") -> Candidate:
    rules = ("exclude_tests", "capital_override")
    skeleton = Skeleton("avg_order_value", "model.shop.customers.city", "spatial", rules, TABLES)
    where = [*in_window("ordered_at", Q3_2017.start, Q3_2017.end, "duckdb"), equals("city", city, "duckdb")]
    return Candidate(skeleton, "point_query", where, [], "value", None, None,
                     {"window": window_slice(Q3_2017), "city": city}, Q3_2017, "t_0001")


def ranking() -> Candidate:
    skeleton = Skeleton("avg_order_value", "model.shop.payments.method", "categorical", (), TABLES)
    where = in_window("ordered_at", H2_2017.start, H2_2017.end, "duckdb")
    return Candidate(skeleton, "ranking", where, ["method"], "ranking", 3, 30,
                     {"window": window_slice(H2_2017), "min_group_rows": 30}, H2_2017, "t_0002")


def gold_call_arguments(sql: str) -> dict:
    """The keyword arguments of the dptool.gold call, as Jinja (and so dbt) reads the literals."""
    template = jinja2.Environment().parse(sql)
    (call,) = [n for n in template.find_all(nodes.Call) if isinstance(n.node, nodes.Getattr) and n.node.attr == "gold"]
    return {kw.key: kw.value.as_const() for kw in call.kwargs}


def test_model_sql_point_query():
    assert model_sql(point_query()) == (FIXTURES / "gold_model_t_0001.sql").read_text(encoding="utf-8")


def test_model_sql_ranking():
    assert model_sql(ranking()) == (FIXTURES / "gold_model_t_0002.sql").read_text(encoding="utf-8")


def test_model_sql_is_tagged():
    assert GOLD_TAG == "dptool_gold"
    assert "tags=['dptool_gold']" in model_sql(ranking())
    assert GOLD_DIR.as_posix() == "models/dptool_gold"


def test_model_sql_arguments_read_back_by_jinja():
    c = ranking()
    assert gold_call_arguments(model_sql(c)) == {
        "metric": "avg_order_value", "rules": [], "where": c.where, "group_by": ["method"], "shape": "ranking",
        "k": 3, "min_rows": 30,
    }


@pytest.mark.parametrize("city", ["Sant'Ana", 'Rua "Velha"', "São João d'Aliança", "C:\\temp", "tab\there"])
def test_slice_value_survives_jinja(city):
    c = point_query(city)
    arguments = gold_call_arguments(model_sql(c))
    assert arguments["where"] == c.where
    assert arguments["rules"] == ["exclude_tests", "capital_override"]


def test_slice_value_outside_the_bmp_survives_jinja():
    c = point_query("Cacto \U0001F335 Store")
    assert gold_call_arguments(model_sql(c))["where"] == c.where


def test_properties_structure():
    props = properties([point_query(), ranking()], SHOP, {"t_0001": QUESTION})
    assert props["version"] == 2
    assert [m["name"] for m in props["models"]] == ["t_0001", "t_0002"]
    rule_task, plain_task = props["models"]
    # the rule test only on the task that has rules
    assert rule_task["data_tests"] == [{"dptool.rule_changes_answer": {"arguments": {"variants": ["gold"]}}}]
    assert "data_tests" not in plain_task
    assert rule_task["config"]["meta"]["dptool"]["task"] == {
        "analysis_type": "point_query", "metric": "avg_order_value", "rules": ["exclude_tests", "capital_override"],
        "dimension": "city", "slice": {"window": window_slice(Q3_2017), "city": "Sant'Ana"},
    }


def test_properties_description_links_each_rule_doc():
    rule_task, plain_task = properties([point_query(), ranking()], SHOP, {"t_0001": QUESTION})["models"]
    assert rule_task["description"] == "\n".join([
        QUESTION, "", "Metric: Average Order Value — AVG(amount paid per order)",
        "", "### Rule: Test Order Exclusion", "", '{{ doc("rule__exclude_tests") }}',
        "", "### Rule: Capital District Override", "", '{{ doc("rule__capital_override") }}',
    ])
    # without a question, the description says what the task is
    assert plain_task["description"] == (
        "ranking of Average Order Value\n\nMetric: Average Order Value — AVG(amount paid per order)")


def test_properties_of_nothing():
    assert properties([], SHOP) == {"version": 2, "models": []}


def test_write_properties(tmp_path):
    (tmp_path / "dbt_project.yml").write_text("name: shop\n", encoding="utf-8")
    (tmp_path / GOLD_DIR).mkdir(parents=True)
    write_properties(DbtProject(tmp_path), [point_query(), ranking()], SHOP, {"t_0001": QUESTION})
    text = (tmp_path / GOLD_DIR / "_dptool_gold.yml").read_text(encoding="utf-8")
    assert text == (FIXTURES / "gold_properties.yml").read_text(encoding="utf-8")
    assert yaml.safe_load(text) == properties([point_query(), ranking()], SHOP, {"t_0001": QUESTION})
