"""Stages 7 and 8: template questions, and the stage-1 programmatic checks that questions and answers pass."""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from pathlib import Path

import pytest

from dptool.generate.enrich import answer
from dptool.generate.instantiate import Candidate, Window, instantiate
from dptool.generate.phrase import answer_hint, format_number, phrase, plural, spoken
from dptool.generate.profile import DimensionProfile
from dptool.generate.sample import Skeleton
from dptool.generate.validate import CHECKS, REQUIRED_KEYS, identifiers, issues, validate
from dptool.project.catalog import load_catalog

FIXTURES = Path(__file__).parent / "fixtures"
SHOP = load_catalog(json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8")))
BANNED = identifiers(SHOP)
AOV_TABLES = ("model.shop.customers", "model.shop.orders", "model.shop.payments")
Q3_2017 = Window(date(2017, 7, 1), date(2017, 10, 1), "Q3 2017")
H2_2017 = Window(date(2017, 7, 1), date(2018, 1, 1), "the second half of 2017")
AOV_STATE = Skeleton("avg_order_value", "model.shop.customers.state", "spatial", ("capital_override", "exclude_tests"),
                     AOV_TABLES)
PAID_AT = Skeleton("paid_rate", "model.shop.orders.ordered_at", "temporal", ("paid_definition",),
                   ("model.shop.orders",))


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
        "What was our Average Order Value for city Sant'Ana in Q3 2017? Give the answer in BRL. "
        "Of the policies that adjust this metric, apply only \"Test Order Exclusion\".")


def test_phrase_point_query_without_window():
    c = Candidate(Skeleton("paid_rate", "model.shop.orders.status", "categorical", (), ("model.shop.orders",)),
                  "point_query", [], [], "value", None, slice={"status": "not_paid"})
    assert phrase(c, {}, SHOP) == ("What was our Paid Rate for order status not paid over the whole history? "
                                   "Give the answer as a percentage. Use the metric as the catalog defines it, "
                                   "before any policy adjusts it.")


def test_phrase_ranking():
    c = Candidate(Skeleton("avg_order_value", "model.shop.payments.method", "categorical", (), AOV_TABLES),
                  "ranking", [], ["method"], "ranking", 3, 30, slice={"min_group_rows": 30}, window=H2_2017)
    assert phrase(c, {}, SHOP) == (
        "Among payment methods with at least 30 orders in the second half of 2017 (counted before any policy), which "
        "3 had the highest Average Order Value? List them from highest to lowest with the value of each. Use the "
        "metric as the catalog defines it, before any policy adjusts it.")


def test_two_rule_subsets_of_one_metric_never_ask_the_same_question():
    # avg_order_value has two rules: each alone, both, and none are four different golds
    def question(rules):
        c = Candidate(Skeleton("avg_order_value", "model.shop.customers.state", "spatial", rules, AOV_TABLES),
                      "point_query", [], [], "value", None, slice={"state": "SP"}, window=Q3_2017)
        return phrase(c, {}, SHOP)

    subsets = [(), ("exclude_tests",), ("capital_override",), ("capital_override", "exclude_tests")]
    assert len({question(r) for r in subsets}) == 4
    # under all of them, the question names none: finding the policies is the test
    assert question(subsets[3]) == "What was our Average Order Value for state SP in Q3 2017? Give the answer in BRL."


def test_phrase_threshold():
    c = Candidate(Skeleton("paid_rate", "model.shop.orders.status", "categorical", ("paid_definition",),
                           ("model.shop.orders",)),
                  "threshold_crossing", [], [], "value", None, slice={"status": "paid"}, window=Q3_2017)
    task = {"gold": {"value": 0.91, "threshold": 0.92, "result": "FAIL"}}
    assert phrase(c, task, SHOP) == ("Did our Paid Rate for order status paid in Q3 2017 exceed 92%? "
                                     "Answer PASS if it did, FAIL if not, with the value.")


NEW_TYPES = [
    (Candidate(PAID_AT, "trend_analysis", [], [], "series", None, slice={"window": {"label": H2_2017.label}},
               window=H2_2017, period="dbt.date_trunc('month', \"ordered_at\")"),
     "How did our Paid Rate develop month by month in the second half of 2017? Say whether it was increasing, "
     "decreasing or flat (the least-squares line through the monthly values decides: flat when it changes by less "
     "than 5% of the average monthly value from the first month to the last, else increasing or decreasing as it "
     "rises or falls), give the total change from the first to the last month in percent, and the month of its "
     "peak."),
    (Candidate(AOV_STATE, "comparison", [], ["state"], "grouped", None, slice={"groups": ["DF", "SP"]},
               window=H2_2017),
     "In the second half of 2017, which had the higher Average Order Value: state DF or state SP? "
     "Give the value of each."),
    (Candidate(Skeleton("paid_rate", "model.shop.orders.status", "categorical", ("paid_definition",),
                        ("model.shop.orders",)), "comparison", [], ["status"], "grouped", None,
               slice={"groups": ["not_paid", "paid"]}),
     "Over the whole history, which had the higher Paid Rate: order status not paid or order status paid? "
     "Give the value of each."),
    (Candidate(AOV_STATE, "significance_testing", [], ["state"], "stats", None, slice={"groups": ["DF", "SP"]},
               window=H2_2017),
     "In the second half of 2017, is the difference in Average Order Value between state DF and state SP "
     "statistically significant at the 5% level? Use a two-tailed Welch's t-test over the individual orders and "
     "give the p-value."),
    (Candidate(AOV_STATE, "decomposition", [], ["state"], "grouped", None, window=Q3_2017),
     "Break down our Average Order Value by state in Q3 2017: give the value for every state. "
     "Give the answer in BRL."),
    (Candidate(Skeleton("paid_rate", "model.shop.orders.status", "categorical", ("paid_definition",),
                        ("model.shop.orders",)), "decomposition", [], ["status"], "grouped", None),
     "Break down our Paid Rate by order status over the whole history: give the value for every order status. "
     "Give the answer as a percentage."),
    (Candidate(AOV_STATE, "counterfactual", [], [], "value", None,
               slice={"state": "DF", "withdrawn_rule": "exclude_tests"}, window=H2_2017,
               gold_rules=("capital_override",), base_rules=AOV_STATE.rules),
     'Suppose the policy "Test Order Exclusion" had never been adopted, with every other policy still in force: '
     "what would our Average Order Value for state DF have been in the second half of 2017? Give the answer in BRL."),
    pytest.param(
        Candidate(PAID_AT, "counterfactual", [], [], "value", None, slice={"withdrawn_rule": "paid_definition"},
                  window=Q3_2017, gold_rules=(), base_rules=("paid_definition",)),
        'Suppose the policy "Paid Order Definition" had never been adopted, with every other policy still in force: '
        "what would our Paid Rate have been in Q3 2017? Give the answer as a percentage.",
        id="counterfactual-time"),
]


@pytest.mark.parametrize(("c", "question"), NEW_TYPES)
def test_phrase_new_types(c, question):
    task = computed(c)
    assert phrase(c, task, SHOP) == question
    assert "_" not in question
    assert not set(re.findall(r"[a-z0-9_.]+", question.lower())) & BANNED
    task = {"question": question, "analysis_type": c.analysis_type, "dimension": c.dimension_column,
            "slice": c.slice, "gold": task["gold"], "base": task["base"], "answer_format": task["answer_format"],
            "rule_ids": list(c.skeleton.rules)}
    assert issues(task, SHOP, BANNED) == []


def test_phrase_names_no_identifier_in_a_group():
    # a compared group with an identifier-like name is spoken as words
    skeleton = Skeleton("avg_order_value", "model.shop.payments.method", "categorical", (), AOV_TABLES)
    c = Candidate(skeleton, "significance_testing", [], ["method"], "stats", None,
                  slice={"groups": ["debit_card", "order_id"]}, window=H2_2017)
    question = phrase(c, {}, SHOP)
    assert "payment method debit card and payment method order id" in question
    assert issues({**good_task(question=question), "rule_ids": []}, SHOP, BANNED) == []


def test_phrase_knowledge_retrieval_has_no_template():
    # knowledge tasks come phrased from dptool.generate.knowledge
    c = Candidate(AOV_STATE, "knowledge_retrieval", [], [], "value", None)
    with pytest.raises(ValueError, match="no template for 'knowledge_retrieval'"):
        phrase(c, {}, SHOP)


def test_phrase_unknown_type():
    c = Candidate(Skeleton("paid_rate", "model.shop.orders.status", "categorical", (), ("model.shop.orders",)),
                  "trend", [], [], "value", None)
    with pytest.raises(ValueError, match="no template for 'trend'"):
        phrase(c, {}, SHOP)


def computed(c: Candidate) -> dict:
    """The answer of a candidate from rows of the shape its gold model has; base and gold differ."""
    key = c.group_by[0] if c.group_by else None
    groups = c.slice.get("groups") or ["first_group", "second group", "third"]
    rows: list[tuple] = []
    for variant, shift in (("base", 0.0), ("gold", 0.25)):
        if c.shape == "value":
            columns = ["variant", "value"]
            rows.append((variant, 0.5 + shift))
        elif c.shape == "ranking":
            columns = ["variant", key, "value", "rank"]
            rows += [(variant, g, 3.0 - i + shift, i + 1) for i, g in enumerate(groups)]
        elif c.shape == "series":
            columns = ["variant", "period", "value"]
            rows += [(variant, datetime(2017, m, 1), v + shift) for m, v in ((7, 1.0), (8, 3.0), (9, 2.0))]
        elif c.shape == "grouped":
            columns = ["variant", key, "value"]
            rows += [(variant, g, 1.0 + i + shift) for i, g in enumerate(groups)]
        else:
            columns = ["variant", key, "n", "mean", "variance"]
            # the rule widens the gap between the groups: p-values 0.26 (base) and 0.0008 (gold)
            rows += [(variant, g, 40, 10.0 + i * (0.5 if variant == "base" else 1.5), 4.0)
                     for i, g in enumerate(groups)]
    return answer(c, SHOP.metrics[c.metric], columns, rows)


def task_of(c: Candidate) -> dict:
    """A task as the pipeline assembles it: the computed answer, the question, the slice and the rules."""
    result = computed(c)
    question = phrase(c, result, SHOP)
    return {"task_id": c.task_id, "question": question, "analysis_type": c.analysis_type,
            "dimension": c.dimension_column, "slice": c.slice, "gold": result["gold"], "base": result["base"],
            "answer_format": result["answer_format"], "rule_ids": list(c.skeleton.rules)}


def test_questions_have_no_underscore_and_pass_the_checks():
    months = tuple((y, m, 100) for y in (2017, 2018) for m in range(1, 13))
    profiles = {
        # three groups each that hold 30 rows in a year: every dimension but time gets a ranking
        "model.shop.customers.city": DimensionProfile(40, (("Sant'Ana", 120), ("são_josé", 90), ("Campinas", 80))),
        "model.shop.customers.state": DimensionProfile(27, (("SP", 500), ("RJ", 200), ("MG", 150))),
        "model.shop.orders.status": DimensionProfile(3, (("not_paid", 100), ("paid_in_full", 900), ("void", 100))),
        "model.shop.payments.method": DimensionProfile(7, (("debit_card", 700), ("credit_card", 200),
                                                           ("boleto", 150))),
        "model.shop.orders.ordered_at": DimensionProfile(700, months=months, encoding="timestamp"),
    }
    # every metric by every dimension, without a rule and with each rule
    skeletons = []
    for m in sorted(SHOP.metrics):
        for d in SHOP.dimensions_of(SHOP.metrics[m]):
            for rules in [(), *((r.id,) for r in SHOP.rules_of(m))]:
                if not (rules and d.kind == "temporal"):
                    skeletons.append(Skeleton(m, d.id, d.kind, rules, SHOP.metrics[m].tables))
    questions, types = [], []
    for seed in (1, 2, 3):
        for c in instantiate(skeletons, SHOP, profiles, seed=seed, dialect="duckdb"):
            task = task_of(c)
            questions.append(task["question"])
            types.append(c.analysis_type)
            assert "_" not in task["question"], task["question"]
            assert issues(task, SHOP, BANNED) == [], task["question"]
    # per seed: avg_order_value by city (40 values: no breakdown) 5 + 2 x 6 with a rule, by state, method, status
    # 6 + 2 x 7 each; by time 3; paid_rate by status 6 + 7, by time 3
    assert len(questions) == 3 * ((5 + 2 * 6) + 3 * (6 + 2 * 7) + 3 + (6 + 7) + 3)
    assert set(types) == {"point_query", "ranking", "threshold_crossing", "trend_analysis", "comparison",
                          "significance_testing", "decomposition", "counterfactual"}
    assert any("paid in full" in q for q in questions)
    assert any("debit card" in q or "credit card" in q for q in questions)
    assert any("são josé" in q for q in questions)


def test_counterfactual_on_a_time_dimension_passes_the_checks():
    months = tuple((2017, m, 100) for m in range(1, 13))
    profiles = {"model.shop.orders.ordered_at": DimensionProfile(700, months=months, encoding="timestamp")}
    (c,) = instantiate([PAID_AT], SHOP, profiles, seed=42, dialect="duckdb", types=("counterfactual",))
    assert set(c.slice) == {"window", "withdrawn_rule"}
    assert issues(task_of(c), SHOP, BANNED) == []


# the thresholds need 2 decimals of a percent (12.36 %) and 1 of a price (100.2), outside the tolerance of both values
@pytest.mark.parametrize(("metric", "base", "gold"), [("paid_rate", 0.1229, 0.12431),
                                                      ("avg_order_value", 100.05, 100.31)])
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
    ranking = analysis_type == "ranking"
    gold = [{"ordered_at": "2017-07", "value": 1.0}] if ranking else {"value": 1.0}
    task = good_task(analysis_type=analysis_type, dimension="ordered_at", slice=slice_, gold=gold, base=gold,
                     rule_ids=[], answer_format={"type": "ranking" if ranking else "value"})
    assert issues(task, SHOP, BANNED) == found


def test_categorical_ranking_is_no_datetime():
    gold = [{"status": "paid", "value": 0.9}]
    task = good_task(analysis_type="ranking", dimension="status", slice={"window": {}, "min_group_rows": 30},
                     gold=gold, base=[{"status": "paid", "value": 0.8}], answer_format={"type": "ranking", "k": 1})
    assert issues(task, SHOP, BANNED) == []


@pytest.mark.parametrize(
    "gold",
    [None, {}, {"value": None}, [], [{"state": "SP", "value": 1.0}, {"state": "RJ", "value": None}], ["SP"], 0.5],
)
def test_no_scorable_answer(gold):
    assert issues(good_task(gold=gold), SHOP, BANNED) == ["no_scorable_answer"]


TREND = {"direction": "flat", "total_change_pct": 0.0, "peak_period": "2017-08"}
COMPARISON = {"group_a": "SP", "group_b": "RJ", "value_a": 1.0, "value_b": 0.0, "higher": "SP"}
SIGNIFICANCE = {"significant": False, "p_value": 0.5, "test_name": "Welch's t-test (two-tailed)", "group_a": "SP",
                "group_b": "RJ", "mean_a": 1.0, "mean_b": 1.1}
KNOWLEDGE = {"passage": "Orders over 60 days are void.", "facts": ["60"]}


@pytest.mark.parametrize(("kind", "gold"), [
    (None, {"value": 0.0}),
    ("value", {"value": 0.0}),
    ("threshold", {"value": 1.0, "threshold": 0.5, "result": "PASS"}),
    ("ranking", [{"state": "SP", "value": 0.0}]),
    ("ranking", [{"state": "SP", "value": 0.0}, {"state": "RJ", "value": None}]),
    ("trend", TREND),
    ("comparison", COMPARISON),
    ("significance", SIGNIFICANCE),
    ("significance", {**SIGNIFICANCE, "significant": True, "p_value": 0.0}),
    ("significance", {"significant": False, "p_value": 0.5, "test_name": "t"}),  # the means are not required
    ("breakdown", [{"state": "SP", "value": 1.0}, {"state": "RJ", "value": None}]),
    ("knowledge", KNOWLEDGE),
    ("knowledge", {"passage": "x" * 11, "facts": ["a"]}),
    ("unknown_kind", {"value": 1.0}),  # an unknown type needs a value
])
def test_scorable_answers(kind, gold):
    fmt = {} if kind is None else {"type": kind}
    base = None if kind == "knowledge" else good_task()["base"]  # a knowledge task has no base answer
    assert issues(good_task(gold=gold, base=base, answer_format=fmt), SHOP, BANNED) == []


def test_required_keys():
    assert REQUIRED_KEYS == {
        "value": ("value",),
        "threshold": ("value", "threshold", "result"),
        "trend": ("direction", "total_change_pct", "peak_period"),
        "comparison": ("group_a", "group_b", "value_a", "value_b", "higher"),
        "significance": ("significant", "p_value", "test_name"),
    }


@pytest.mark.parametrize(("kind", "gold"), [
    ("value", {"threshold": 1.0}),
    ("value", [{"value": 1.0}]),
    ("threshold", {"value": 1.0, "threshold": 0.5}),
    ("threshold", {"value": 1.0, "threshold": None, "result": "PASS"}),
    ("ranking", {"value": 1.0}),
    ("ranking", []),
    ("ranking", [{"state": "SP"}]),
    ("ranking", [{"state": "SP", "value": None}]),
    ("ranking", ["SP"]),
    ("breakdown", [{"state": "SP", "value": None}, {"state": "RJ", "value": None}]),
    ("breakdown", {"SP": 1.0}),
    ("trend", {k: v for k, v in TREND.items() if k != "peak_period"}),
    ("trend", {**TREND, "direction": None}),
    ("trend", [TREND]),
    ("comparison", {**COMPARISON, "higher": None}),
    ("comparison", {k: v for k, v in COMPARISON.items() if k != "value_b"}),
    ("significance", {**SIGNIFICANCE, "p_value": None}),
    ("significance", {k: v for k, v in SIGNIFICANCE.items() if k != "test_name"}),
    ("knowledge", {"passage": "x" * 10, "facts": ["a"]}),  # a passage needs more than 10 characters
    ("knowledge", {**KNOWLEDGE, "facts": []}),
    ("knowledge", {"facts": ["60"]}),
    ("knowledge", {"passage": None, "facts": ["60"]}),
    ("knowledge", "Orders over 60 days are void."),
    ("knowledge", None),
])
def test_no_scorable_answer_by_type(kind, gold):
    task = good_task(gold=gold, base=None, rule_ids=[], answer_format={"type": kind})
    assert issues(task, SHOP, BANNED) == ["no_scorable_answer"]


def test_rule_without_effect():
    assert issues(good_task(base={"value": 0.91}), SHOP, BANNED) == ["rule_without_effect"]
    # without a rule, gold equal to base is expected
    assert issues(good_task(base={"value": 0.91}, rule_ids=[]), SHOP, BANNED) == []


@pytest.mark.parametrize(("base", "kept"), [
    (0.9119, True),   # 0.0019 apart: no answer is within 0.1 % of both (0.00091 of the gold, 0.000912 of the base)
    (0.9018, True),
    (0.9117, False),  # 0.0017 apart: 0.91085 is within the tolerance of both
    (0.9083, False),
    (0.9105, False),  # the base itself scores as right
])
def test_a_rule_task_where_one_answer_is_right_for_gold_and_base_is_dropped(base, kept):
    task = good_task(base={"value": base}, answer_format={"type": "value"},
                     tolerance={"rel_tol": 0.001, "abs_tol": 1e-6})
    assert issues(task, SHOP, BANNED) == ([] if kept else ["rule_without_effect"])


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
                              "no_scorable_answer": 1, "rule_without_effect": 2, "scope_mismatch": 0,
                              "trend_rule_unstated": 0, "selection_unstated": 0, "thin_support": 0,
                              "degenerate_groups": 0, "removed_group_asked": 0}


# --- scope_mismatch: the question, rule_scope and rules_in_force agree with the closure ------------------------------

AOV_RULES = ["capital_override", "exclude_tests"]  # every rule that governs avg_order_value


def sql_task(rules, **changes) -> dict:
    """A SQL task on avg_order_value as the pipeline records it, its question from the template phraser."""
    analysis_type = changes.pop("analysis_type", "point_query")
    withdrawn = changes.pop("withdrawn_rule", None)
    skeleton = Skeleton("avg_order_value", "model.shop.customers.state", "spatial",
                        (withdrawn,) if withdrawn else tuple(rules), AOV_TABLES)
    slice_ = {"state": "SP", **({"withdrawn_rule": withdrawn} if withdrawn else {})}
    c = Candidate(skeleton, analysis_type, [], [], "value", None, slice=slice_, window=Q3_2017,
                  gold_rules=tuple(rules), base_rules=tuple(AOV_RULES) if withdrawn else ())
    result = computed(c)
    governing = tuple(AOV_RULES)
    scope_ = "all" if withdrawn else ("all" if set(rules) == set(governing) else "subset" if rules else "none")
    task = {"task_id": "t_0100", "question": phrase(c, result, SHOP), "analysis_type": analysis_type,
            "dimension": "state", "slice": slice_, "gold": result["gold"], "base": result["base"],
            "answer_format": result["answer_format"], "rule_ids": list(skeleton.rules),
            "metric_ids": ["avg_order_value"], "gold_sql": "select 1", "rule_scope": scope_,
            "rules_in_force": list(rules), **({"withdrawn_rule": withdrawn} if withdrawn else {}),
            "spec": {"metric": "avg_order_value", "rules": list(rules), "base_rules": list(c.base_rules)}}
    return {**task, **changes}


@pytest.mark.parametrize("rules", [AOV_RULES, ["exclude_tests"], []], ids=["all", "subset", "none"])
def test_scope_of_a_template_question_matches(rules):
    assert issues(sql_task(rules), SHOP, BANNED) == []


def test_scope_of_a_counterfactual_matches():
    task = sql_task(["capital_override"], analysis_type="counterfactual", withdrawn_rule="exclude_tests")
    assert task["question"].startswith('Suppose the policy "Test Order Exclusion" had never been adopted')
    assert issues(task, SHOP, BANNED) == []


SCOPE_MISMATCHES = {
    # t_0413 of issue 12: "every other policy still in force", and the gold applies none
    "counterfactual_gold_applies_nothing": lambda: sql_task(
        [], analysis_type="counterfactual", withdrawn_rule="exclude_tests"),
    "counterfactual_base_lacks_a_rule": lambda: sql_task(
        ["capital_override"], analysis_type="counterfactual", withdrawn_rule="exclude_tests",
        spec={"rules": ["capital_override"], "base_rules": ["exclude_tests"]}),
    "counterfactual_without_withdrawn_rule": lambda: {
        k: v for k, v in sql_task(["capital_override"], analysis_type="counterfactual",
                                  withdrawn_rule="exclude_tests").items() if k != "withdrawn_rule"},
    # t_0640 of issue 12: the question says nothing (every policy), and the gold leaves one out
    "all_with_a_rule_left_out": lambda: sql_task(AOV_RULES, rules_in_force=["exclude_tests"]),
    "gold_applies_other_rules": lambda: sql_task(AOV_RULES, spec={"rules": ["exclude_tests"]}),
    "all_question_says_apply_only": lambda: sql_task(
        AOV_RULES, question=sql_task(["exclude_tests"])["question"]),
    "subset_question_says_nothing": lambda: sql_task(["exclude_tests"], question=sql_task(AOV_RULES)["question"]),
    "subset_question_names_another_policy": lambda: sql_task(
        ["exclude_tests"], question=sql_task(["capital_override"])["question"]),
    "subset_that_is_all": lambda: sql_task(AOV_RULES, rule_scope="subset"),
    "none_with_a_rule_in_force": lambda: sql_task(["exclude_tests"], rule_scope="none"),
    "none_question_says_nothing": lambda: sql_task([], question=sql_task(AOV_RULES)["question"]),
    "no_scope_recorded": lambda: {k: v for k, v in sql_task(AOV_RULES).items() if k != "rule_scope"},
    "withdrawn_rule_on_a_point_query": lambda: {**sql_task(AOV_RULES), "withdrawn_rule": "exclude_tests"},
}


@pytest.mark.parametrize("case", list(SCOPE_MISMATCHES))
def test_scope_mismatch(case):
    task = SCOPE_MISMATCHES[case]()
    assert "scope_mismatch" in issues(task, SHOP, BANNED)
    kept, rejected = validate([task], SHOP)
    assert kept == [] and rejected["scope_mismatch"] == 1


def test_validate_nothing():
    kept, rejected = validate([], SHOP)
    assert kept == []
    assert dict(rejected) == dict.fromkeys(CHECKS, 0)


def test_duplicate_questions():
    from dptool.generate.validate import duplicate_questions

    def task(task_id, question, value):
        return {"task_id": task_id, "question": question, "gold": {"value": value}}

    tasks = [task("t_0003", "What was X in 2017?", 1.0), task("t_0001", "What was  x in 2017?", 1.0),
             task("t_0002", "What was Y?", 1.0), task("t_0005", "What was Y?", 2.0), task("t_0004", "Z?", 3.0)]
    # the same gold: the first is kept; different golds: an agent cannot tell which is meant, both go
    assert duplicate_questions(tasks) == {"t_0003", "t_0002", "t_0005"}
    assert duplicate_questions(tasks[4:]) == set()


TREND_QUESTION = ("How did our Paid Rate develop month by month in 2017? Say whether it was increasing, decreasing or "
                  "flat ({rule}), give the total change in percent and the month of its peak.")


@pytest.mark.parametrize(("rule", "stated"), [
    ("the least-squares line through the monthly values decides: flat when it changes by less than 5% of the "
     "average monthly value", True),
    ("by a least squares fit; flat within 5 percent of the mean", True),
    ("by the first and the last month", False),  # the rule the scorer does not use
    ("by a least-squares line, flat within 1% of the mean", False),  # another band
    ("by a least-squares line, flat within 15% of the mean", False),
])
def test_a_trend_question_must_state_its_direction_rule(rule, stated):
    trend = {"direction": "flat", "total_change_pct": 0.0, "peak_period": "2017-08"}
    task = good_task(analysis_type="trend_analysis", question=TREND_QUESTION.format(rule=rule), gold=trend,
                     base={**trend, "direction": "increasing"}, answer_format={"type": "trend"})
    assert ("trend_rule_unstated" in issues(task, SHOP, BANNED)) is not stated


def test_ranking_says_when_at_least_n_is_counted():
    """The gold's `having count(*) >= N` counts the rows the policies leave: the question says so."""
    skeleton = Skeleton("avg_order_value", "model.shop.payments.method", "categorical", ("exclude_tests",), AOV_TABLES)
    c = Candidate(skeleton, "ranking", [], ["method"], "ranking", 3, 30, slice={"min_group_rows": 30}, window=H2_2017)
    assert "with at least 30 orders in the second half of 2017 (counted after the policies have excluded any " \
           "orders), which 3" in phrase(c, {}, SHOP)


def test_phrase_reads_a_semantic_models_grain_a_plural_label_and_a_dim_suffix_as_a_person_would():
    """Issue 28 on jaffle-sl-template: "at least 30 order item", "What was our Orders", "order total dim 7.28"."""
    import copy
    import dataclasses

    shop = copy.deepcopy(SHOP)
    shop.metrics["avg_order_value"] = dataclasses.replace(shop.metrics["avg_order_value"], grain="order item",
                                                          label="Orders")
    dim = "model.shop.customers.city"
    shop.dimensions[dim] = dataclasses.replace(shop.dimensions[dim], label="order total dim")
    skeleton = Skeleton("avg_order_value", dim, "spatial", (), AOV_TABLES)
    point = Candidate(skeleton, "point_query", [], [], "value", None, slice={"city": 7.28}, window=Q3_2017)
    assert phrase(point, {}, shop).startswith("What were our Orders for order total 7.28 in Q3 2017?")
    ranking = Candidate(skeleton, "ranking", [], ["city"], "ranking", 3, 30, slice={"min_group_rows": 30},
                        window=H2_2017)
    assert phrase(ranking, {}, shop).startswith("Among order totals with at least 30 order items in the second half")
    assert phrase(dataclasses.replace(point), {}, SHOP).startswith("What was our Average Order Value")
