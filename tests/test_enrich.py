"""Stage 6: analysis-type answers from the rows a gold model materialized (DI-Bench Appendix A)."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from pathlib import Path

import pytest

from dptool.catalog import load_catalog
from dptool.enrich import NotScorable, answer, threshold_between
from dptool.instantiate import Candidate
from dptool.sample import Skeleton

FIXTURES = Path(__file__).parent / "fixtures"
SHOP = load_catalog(json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8")))
AOV = SHOP.metrics["avg_order_value"]  # currency, BRL
PAID = SHOP.metrics["paid_rate"]  # percent
TABLES = ("model.shop.customers", "model.shop.orders", "model.shop.payments")
VALUE_COLUMNS = ["variant", "value"]
RANKING_COLUMNS = ["variant", "state", "value", "rank"]


def candidate(analysis_type: str, rules: tuple[str, ...] = ("exclude_tests",)) -> Candidate:
    skeleton = Skeleton("avg_order_value", "model.shop.customers.state", "spatial", rules, TABLES)
    if analysis_type == "ranking":
        return Candidate(skeleton, "ranking", [], ["state"], "ranking", 3, 30)
    return Candidate(skeleton, analysis_type, ["state = 'SP'"], [], "value", None, slice={"state": "SP"})


# --- threshold_between ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "threshold"),
    [
        (10.3, 12.7, 12.0),
        (12.7, 10.3, 12.0),
        (95, 105, 100.0),
        (1, 2, 1.5),
        (0.1, 0.3, 0.2),
        (0.912, 0.934, 0.92),
        (1234567, 1250000, 1240000.0),
        (-5.2, -3.1, -4.0),
        (-12.34, -12.33, -12.335),
        (-0.3, 0.1, -0.1),
        (-1.0, 0.5, 0.0),
        (0.123456, 0.123457, 0.1234565),
        (-2.000001, -2.0, -2.0000005),
        (99.999999, 100.0, 99.9999995),
        (123456789.123456, 123456789.123457, 123456789.1234565),
    ],
)
def test_threshold_between(a, b, threshold):
    t = threshold_between(a, b)
    assert t == threshold
    assert min(a, b) < t < max(a, b)


def test_threshold_between_zero_is_positive():
    assert math.copysign(1.0, threshold_between(-1.0, 0.5)) == 1.0


def test_threshold_between_equal_values():
    with pytest.raises(NotScorable, match="base and gold agree"):
        threshold_between(3.5, 3.5)


def test_threshold_between_below_eight_decimals():
    t = threshold_between(1.0, 1.000000001)
    assert 1.0 < t < 1.000000001


# --- answer -------------------------------------------------------------------------------------------------------


def test_point_query():
    rows = [("base", Decimal("12.3456789")), ("gold", 10.0)]
    assert answer(candidate("point_query"), AOV, VALUE_COLUMNS, rows) == {
        "gold": {"value": 10.0},
        "base": {"value": 12.345679},
        "answer_format": {"type": "value", "unit": "BRL", "format": "currency"},
        "tolerance": {"rel_tol": 0.001, "abs_tol": 0.005},
    }


def test_point_query_percent_tolerance():
    result = answer(candidate("point_query"), PAID, VALUE_COLUMNS, [("gold", 0.91), ("base", 0.93)])
    assert result["tolerance"] == {"rel_tol": 0.001, "abs_tol": 0.0005}
    assert result["answer_format"] == {"type": "value", "unit": "share of orders", "format": "percent"}


def test_negative_zero_normalised():
    result = answer(candidate("point_query"), AOV, VALUE_COLUMNS, [("gold", -0.0), ("base", -0.0000001)])
    assert result["gold"]["value"] == 0.0
    assert math.copysign(1.0, result["gold"]["value"]) == 1.0
    assert math.copysign(1.0, result["base"]["value"]) == 1.0
    assert json.dumps(result["gold"]) == '{"value": 0.0}'


def test_ranking_follows_rank_column():
    rows = [
        ("gold", "RJ", 210.5, 2), ("base", "SP", 190.0, 2), ("gold", "MG", 150.25, 3),
        ("gold", "SP", 230.0, 1), ("base", "RJ", 205.0, 1), ("base", "MG", 150.0, 3),
    ]
    assert answer(candidate("ranking"), AOV, RANKING_COLUMNS, rows) == {
        "gold": [{"state": "SP", "value": 230.0}, {"state": "RJ", "value": 210.5}, {"state": "MG", "value": 150.25}],
        "base": [{"state": "RJ", "value": 205.0}, {"state": "SP", "value": 190.0}, {"state": "MG", "value": 150.0}],
        "answer_format": {"type": "ranking", "key": "state", "k": 3, "unit": "BRL", "format": "currency"},
        "tolerance": {"rel_tol": 0.001, "abs_tol": 0.005},
    }


def test_ranking_tie_in_base_is_allowed():
    rows = [("gold", "SP", 3.0, 1), ("gold", "RJ", 2.0, 2), ("base", "SP", 2.0, 1), ("base", "RJ", 2.0, 2)]
    result = answer(candidate("ranking"), AOV, RANKING_COLUMNS, rows)
    assert result["base"] == [{"state": "SP", "value": 2.0}, {"state": "RJ", "value": 2.0}]


def test_ranking_tie_in_gold_is_not_scorable():
    rows = [("gold", "SP", 2.0, 1), ("gold", "RJ", 2.0, 2), ("base", "SP", 3.0, 1), ("base", "RJ", 2.0, 2)]
    with pytest.raises(NotScorable, match="tied values"):
        answer(candidate("ranking"), AOV, RANKING_COLUMNS, rows)


def test_ranking_tie_below_six_decimals_is_a_tie():
    rows = [("gold", "SP", 2.0000001, 1), ("gold", "RJ", 2.0, 2), ("base", "SP", 3.0, 1)]
    with pytest.raises(NotScorable, match="tied values"):
        answer(candidate("ranking"), AOV, RANKING_COLUMNS, rows)


def test_empty_ranking_is_not_scorable():
    rows = [("base", "SP", 3.0, 1)]
    with pytest.raises(NotScorable, match="the ranking is empty"):
        answer(candidate("ranking"), AOV, RANKING_COLUMNS, rows)


def test_threshold_crossing_with_rule():
    result = answer(candidate("threshold_crossing"), AOV, VALUE_COLUMNS, [("base", 12.0), ("gold", 10.0)])
    assert result["gold"] == {"value": 10.0, "threshold": 11.0, "result": "FAIL"}
    assert result["base"] == {"value": 12.0, "threshold": 11.0, "result": "PASS"}
    assert result["answer_format"] == {"type": "threshold", "comparison": "exceeds", "unit": "BRL",
                                       "format": "currency"}


@pytest.mark.parametrize(
    ("gold", "threshold", "verdict"),
    [(10.5, 10.0, "PASS"), (10.0, 11.0, "FAIL"), (0.934, 0.93, "PASS"), (-12.3, -12.0, "FAIL"), (0.0, 1.0, "FAIL"),
     (187.46, 190.0, "FAIL")],
)
def test_threshold_crossing_without_rule(gold, threshold, verdict):
    c = candidate("threshold_crossing", rules=())
    result = answer(c, AOV, VALUE_COLUMNS, [("base", gold), ("gold", gold)])
    assert result["gold"] == {"value": gold, "threshold": threshold, "result": verdict}


def test_threshold_crossing_rule_without_effect_is_not_scorable():
    with pytest.raises(NotScorable, match="base and gold agree"):
        answer(candidate("threshold_crossing"), AOV, VALUE_COLUMNS, [("base", 5.0), ("gold", 5.0)])


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([("base", 1.0), ("gold", None)], "the value is NULL"),
        ([("base", None), ("gold", 1.0)], "the value is NULL"),
        ([("base", 1.0), ("gold", float("nan"))], "the value is nan"),
        ([("base", 1.0)], "expected one row, got 0"),
        ([("base", 1.0), ("gold", 1.0), ("gold", 2.0)], "expected one row, got 2"),
    ],
)
def test_point_query_not_scorable(rows, message):
    with pytest.raises(NotScorable) as info:
        answer(candidate("point_query"), AOV, VALUE_COLUMNS, rows)
    assert str(info.value) == message


def test_unknown_analysis_type():
    with pytest.raises(ValueError, match="unknown analysis type 'trend'"):
        answer(candidate("trend"), AOV, VALUE_COLUMNS, [("base", 1.0), ("gold", 2.0)])
