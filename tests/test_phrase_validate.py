"""Stages 7 and 8: template questions, and the stage-1 programmatic checks that questions and answers pass."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest

from dptool.catalog import load_catalog
from dptool.enrich import answer
from dptool.instantiate import Candidate, Window, instantiate
from dptool.phrase import answer_hint, format_number, phrase, plural, spoken
from dptool.profile import DimensionProfile
from dptool.sample import Skeleton
from dptool.validate import CHECKS, identifiers, issues, validate

FIXTURES = Path(__file__).parent / "fixtures"
SHOP = load_catalog(json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8")))
BANNED = identifiers(SHOP)
AOV_TABLES = ("model.shop.customers", "model.shop.orders", "model.shop.payments")
Q3_2017 = Window(date(2017, 7, 1), date(2017, 10, 1), "Q3 2017")
H2_2017 = Window(date(2017, 7, 1), date(2018, 1, 1), "the second half of 2017")


def good_task(**changes) -> dict:
    task = {
        "task_id": "t_0001", "analysis_type": "point_query", "question": "What was our Paid Rate in Q3 2017?",
        "gold": {"value": 0.91}, "base": {"value": 0.93}, "rule_ids": ["paid_definition"], "dimension": "status",
        "slice": {"window": {"label": "Q3 2017"}, "status": "paid"},
    }
    return {**task, **changes}


# --- phrase -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("noun", "expected"),
    [("state", "states"), ("city", "cities"), ("category", "categories"), ("day", "days"), ("key", "keys"),
     ("order status", "order statuses"), ("box", "boxes"), ("branch", "branches"), ("dish", "dishes"),
     ("payment method", "payment methods"), ("delivery city", "delivery cities")],
)
def test_plural(noun, expected):
    assert plural(noun) == expected


def test_spoken():
    assert spoken("not_defined") == "not defined"
    assert spoken(5) == "5"
    assert spoken("Sant'Ana") == "Sant'Ana"


@pytest.mark.parametrize(
    ("value", "fmt", "unit", "text"),
    [(0.92, "percent", "share of orders", "92%"), (0.1234, "percent", "", "12.34%"),
     (1234.5, "currency", "BRL", "R$ 1,234.50"), (1234.5, "currency", "USD", "1,234.50 USD"),
     (26.67, "number", "days", "26.67 days"), (0.75, "number", "", "0.75")],
)
def test_format_number(value, fmt, unit, text):
    assert format_number(value, fmt, unit) == text


def test_answer_hint():
    assert answer_hint("percent", "share of orders") == "Give the answer as a percentage."
    assert answer_hint("currency", "BRL") == "Give the answer in BRL."
    assert answer_hint("number", "") == ""


def test_phrase_point_query():
    c = Candidate(Skeleton("avg_order_value", "model.shop.customers.city", "spatial", ("exclude_tests",), AOV_TABLES),
                  "point_query", [], [], "value", None, slice={"city": "Sant'Ana"}, window=Q3_2017)
    assert phrase(c, {}, SHOP) == (
        "What was our Average Order Value for city Sant'Ana in Q3 2017? Give the answer in BRL.")


def test_phrase_point_query_without_window():
    c = Candidate(Skeleton("paid_rate", "model.shop.orders.status", "categorical", (), ("model.shop.orders",)),
                  "point_query", [], [], "value", None, slice={"status": "not_paid"})
    assert phrase(c, {}, SHOP) == ("What was our Paid Rate for order status not paid over the whole history? "
                                   "Give the answer as a percentage.")


def test_phrase_ranking():
    c = Candidate(Skeleton("avg_order_value", "model.shop.payments.method", "categorical", (), AOV_TABLES),
                  "ranking", [], ["method"], "ranking", 3, 30, slice={"min_group_rows": 30}, window=H2_2017)
    assert phrase(c, {}, SHOP) == (
        "Among payment methods with at least 30 orders in the second half of 2017, which 3 had the highest Average "
        "Order Value? List them from highest to lowest with the value of each.")


def test_phrase_threshold():
    c = Candidate(Skeleton("paid_rate", "model.shop.orders.status", "categorical", ("paid_definition",),
                           ("model.shop.orders",)),
                  "threshold_crossing", [], [], "value", None, slice={"status": "paid"}, window=Q3_2017)
    task = {"gold": {"value": 0.91, "threshold": 0.92, "result": "FAIL"}}
    assert phrase(c, task, SHOP) == ("Did our Paid Rate for order status paid in Q3 2017 exceed 92%? "
                                     "Answer PASS if it did, FAIL if not, with the value.")


def test_phrase_unknown_type():
    c = Candidate(Skeleton("paid_rate", "model.shop.orders.status", "categorical", (), ("model.shop.orders",)),
                  "trend", [], [], "value", None)
    with pytest.raises(ValueError, match="no template for 'trend'"):
        phrase(c, {}, SHOP)


def test_questions_have_no_underscore_and_pass_the_checks():
    months = tuple((y, m, 100) for y in (2017, 2018) for m in range(1, 13))
    profiles = {
        "model.shop.customers.city": DimensionProfile(40, (("Sant'Ana", 120), ("são_josé", 90))),
        "model.shop.customers.state": DimensionProfile(27, (("SP", 500), ("RJ", 200))),
        "model.shop.orders.status": DimensionProfile(3, (("not_paid", 100), ("paid_in_full", 900))),
        "model.shop.payments.method": DimensionProfile(7, (("debit_card", 700), ("credit_card", 200))),
        "model.shop.orders.ordered_at": DimensionProfile(700, months=months),
    }
    skeletons = [Skeleton(m, d.id, d.kind, (), SHOP.metrics[m].tables)
                 for m in sorted(SHOP.metrics) for d in SHOP.dimensions_of(SHOP.metrics[m])]
    questions = []
    for seed in (1, 2, 3):
        for c in instantiate(skeletons, SHOP, profiles, seed=seed, dialect="duckdb"):
            task = {"gold": {"value": 0.5, "threshold": 0.45, "result": "PASS"}}
            question = phrase(c, task, SHOP)
            questions.append(question)
            assert "_" not in question, question
            task = {"question": question, "analysis_type": c.analysis_type, "dimension": c.dimension_column,
                    "slice": c.slice, "gold": task["gold"], "base": task["gold"], "rule_ids": []}
            assert issues(task, SHOP, BANNED) == [], question
    # per seed: avg_order_value 4 x 3 + 2 (temporal), paid_rate 3 + 2
    assert len(questions) == 3 * 19
    assert any("paid in full" in q for q in questions)
    assert any("debit card" in q or "credit card" in q for q in questions)


@pytest.mark.parametrize(("metric", "base", "gold"), [("paid_rate", 0.123456, 0.123457),
                                                      ("avg_order_value", 100.001, 100.004)])
def test_threshold_in_question_separates_base_and_gold(metric, base, gold):
    rule = SHOP.rules_of(metric)[-1].id
    skeleton = Skeleton(metric, "model.shop.orders.status", "categorical", (rule,), SHOP.metrics[metric].tables)
    c = Candidate(skeleton, "threshold_crossing", [], [], "value", None, slice={"status": "paid"}, window=Q3_2017)
    task = answer(c, SHOP.metrics[metric], ["variant", "value"], [("base", base), ("gold", gold)])
    question = phrase(c, task, SHOP)
    stated = float(re.search(r"exceed (?:R\$ )?([\d.,]+)", question).group(1).replace(",", "")) / (
        100 if SHOP.metrics[metric].format == "percent" else 1)
    assert base < stated < gold, question


# --- validate -----------------------------------------------------------------------------------------------------


def test_identifiers():
    # names written as code: tables and columns with `_` or `.`, metric ids, rule macros
    assert sorted(BANNED) == ["avg_order_value", "customer_id", "order_id", "ordered_at", "paid_rate",
                              "rule__capital_override", "rule__exclude_tests", "rule__paid_definition"]


def test_good_task_passes():
    assert issues(good_task(), SHOP, BANNED) == []


@pytest.mark.parametrize(
    "question",
    ["What was our Paid Rate by ordered_at in Q3 2017?", "What was the avg_order_value for city Campinas in 2017?",
     "Apply RULE__PAID_DEFINITION: what was our Paid Rate?",
     "What does the dptool benchmark say about our Paid Rate?"],
)
def test_identifier_leakage(question):
    assert issues(good_task(question=question), SHOP, BANNED) == ["identifier_leakage"]


@pytest.mark.parametrize("question", ["What was our Paid Rate in 2017, grouped by ordered_at.",
                                      "Which orders.order_id had the highest Average Order Value in 2017?"])
def test_identifier_leakage_next_to_a_dot(question):
    assert issues(good_task(question=question), SHOP, BANNED) == ["identifier_leakage"]


def test_words_that_contain_an_identifier_do_not_leak():
    assert issues(good_task(question="What was our Paid Rate for reordered_attempts in Q3?"), SHOP, BANNED) == []


@pytest.mark.parametrize(("question", "found"), [("Paid Rate?", ["too_short"]), ("", ["too_short"]),
                                                 ("   What was it?       ", ["too_short"]),
                                                 ("What was our Paid Rate?", [])])
def test_too_short(question, found):
    assert issues(good_task(question=question), SHOP, BANNED) == found


@pytest.mark.parametrize(
    ("analysis_type", "slice_", "found"),
    [("ranking", {"window": {}, "min_group_rows": 30}, ["datetime_as_category"]),
     ("point_query", {"window": {}, "ordered_at": "2017-07-01"}, ["datetime_as_category"]),
     ("point_query", {"window": {}}, []),
     ("threshold_crossing", {}, [])],
)
def test_datetime_as_category(analysis_type, slice_, found):
    gold = [{"ordered_at": "2017-07", "value": 1.0}] if analysis_type == "ranking" else {"value": 1.0}
    task = good_task(analysis_type=analysis_type, dimension="ordered_at", slice=slice_, gold=gold, base=gold,
                     rule_ids=[])
    assert issues(task, SHOP, BANNED) == found


def test_categorical_ranking_is_no_datetime():
    gold = [{"status": "paid", "value": 0.9}]
    task = good_task(analysis_type="ranking", dimension="status", slice={"window": {}, "min_group_rows": 30},
                     gold=gold, base=[{"status": "paid", "value": 0.8}])
    assert issues(task, SHOP, BANNED) == []


@pytest.mark.parametrize(
    "gold",
    [None, {}, {"value": None}, [], [{"state": "SP", "value": 1.0}, {"state": "RJ", "value": None}], ["SP"], 0.5],
)
def test_no_scorable_answer(gold):
    assert issues(good_task(gold=gold), SHOP, BANNED) == ["no_scorable_answer"]


def test_scorable_answers():
    for gold in ({"value": 0.0}, {"value": 1.0, "threshold": 0.5, "result": "PASS"},
                 [{"state": "SP", "value": 0.0}]):
        assert issues(good_task(gold=gold), SHOP, BANNED) == []


def test_rule_without_effect():
    assert issues(good_task(base={"value": 0.91}), SHOP, BANNED) == ["rule_without_effect"]
    # without a rule, gold equal to base is expected
    assert issues(good_task(base={"value": 0.91}, rule_ids=[]), SHOP, BANNED) == []


def test_validate_counts_per_check():
    tasks = [
        good_task(task_id="t_0001"),
        good_task(task_id="t_0002", question="Paid_rate?"),  # leakage and too short
        good_task(task_id="t_0003", gold={"value": None}),
        good_task(task_id="t_0004", base={"value": 0.91}),
        good_task(task_id="t_0005", dimension="ordered_at", slice={"ordered_at": "2017-07-01"}),
        good_task(task_id="t_0006"),
        good_task(task_id="t_0007", question="What was our paid_rate?", base={"value": 0.91}),
    ]
    kept, rejected = validate(tasks, SHOP)
    assert [t["task_id"] for t in kept] == ["t_0001", "t_0006"]
    assert tuple(rejected) == CHECKS
    assert dict(rejected) == {"identifier_leakage": 2, "too_short": 1, "datetime_as_category": 1,
                              "no_scorable_answer": 1, "rule_without_effect": 2}


def test_validate_nothing():
    kept, rejected = validate([], SHOP)
    assert kept == []
    assert dict(rejected) == dict.fromkeys(CHECKS, 0)
