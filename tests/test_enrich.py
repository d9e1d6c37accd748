"""Stage 6: analysis-type answers from the rows a gold model materialized (DI-Bench Appendix A)."""

from __future__ import annotations

import json
import math
import random
import statistics
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from scipy.stats import ttest_ind, ttest_ind_from_stats

from dptool.generate import enrich
from dptool.generate.enrich import NotScorable, _number, answer, period_label, threshold_between
from dptool.generate.instantiate import Candidate
from dptool.generate.sample import Skeleton
from dptool.project.catalog import load_catalog

FIXTURES = Path(__file__).parent / "fixtures"
SHOP = load_catalog(json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8")))
AOV = SHOP.metrics["avg_order_value"]  # currency, BRL
PAID = SHOP.metrics["paid_rate"]  # percent
TABLES = ("model.shop.customers", "model.shop.orders", "model.shop.payments")
VALUE_COLUMNS = ["variant", "value"]
RANKING_COLUMNS = ["variant", "state", "value", "rank"]


def candidate(analysis_type: str, rules: tuple[str, ...] = ("exclude_tests",), k: int = 3) -> Candidate:
    skeleton = Skeleton("avg_order_value", "model.shop.customers.state", "spatial", rules, TABLES)
    if analysis_type == "ranking":
        return Candidate(skeleton, "ranking", [], ["state"], "ranking", k, 30)
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


PERCENT_TOL, NUMBER_TOL = {"rel_tol": 0.001, "abs_tol": 0.0005}, {"rel_tol": 0.001, "abs_tol": 0.005}


@pytest.mark.parametrize(("a", "b", "tol", "threshold"), [
    (0.03, 0.05, PERCENT_TOL, 0.04),
    (0.0412, 0.0431, PERCENT_TOL, 0.042),  # 0.0420 lies 0.08 points from one and 0.11 from the other
    (10.3, 12.7, NUMBER_TOL, 12.0),
    (1000, 1003, NUMBER_TOL, 1001.5),  # 1002 is within 0.1 % of 1003
])
def test_threshold_between_is_outside_the_tolerance_of_both(a, b, tol, threshold):
    assert threshold_between(a, b, tol) == threshold


@pytest.mark.parametrize(("a", "b", "tol"), [
    (0.000527, 0.000529, PERCENT_TOL),  # a rule that moves a rate by 0.0002 points: no threshold is clear of both
    (0.037815, 0.038793, PERCENT_TOL),  # 0.098 points apart: less than two tolerances
    (100.0, 100.2, NUMBER_TOL),
])
def test_no_threshold_between_values_closer_than_the_tolerance(a, b, tol):
    with pytest.raises(NotScorable, match="within the answer's tolerance"):
        threshold_between(a, b, tol)


@pytest.mark.parametrize(("value", "tol", "threshold"), [
    (0.038793, PERCENT_TOL, 0.04),  # 0.039 is 0.02 points away: the next round number up
    (3.0, NUMBER_TOL, 3.1),
    (12.345, NUMBER_TOL, 12.0),
    (1e-06, NUMBER_TOL, 0.006),
    (-0.0004, PERCENT_TOL, 0.0002),
    (0.0, PERCENT_TOL, 1.0),
])
def test_a_threshold_without_a_rule_is_a_round_number_outside_the_values_tolerance(value, tol, threshold):
    assert enrich._round_threshold(value, tol) == threshold


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
    result = answer(candidate("ranking", k=2), AOV, RANKING_COLUMNS, rows)
    assert result["base"] == [{"state": "SP", "value": 2.0}, {"state": "RJ", "value": 2.0}]


def test_ranking_tie_in_gold_is_not_scorable():
    rows = [("gold", "SP", 2.0, 1), ("gold", "RJ", 2.0, 2), ("base", "SP", 3.0, 1), ("base", "RJ", 2.0, 2)]
    with pytest.raises(NotScorable, match="tied values"):
        answer(candidate("ranking", k=2), AOV, RANKING_COLUMNS, rows)


@pytest.mark.parametrize("short", ["gold", "base"])
def test_ranking_with_fewer_groups_than_asked_is_not_scorable(short):
    # the question asks for the top 3: a gold (or a base) of 2 groups would not answer it
    full = [("SP", 3.0, 1), ("RJ", 2.0, 2), ("MG", 1.0, 3)]
    rows = [(v, *r) for v in ("gold", "base") for r in (full[:2] if v == short else full)]
    with pytest.raises(NotScorable, match="fewer groups qualify than the ranking asks for"):
        answer(candidate("ranking"), AOV, RANKING_COLUMNS, rows)


def test_decimal_group_keys_become_numbers_json_can_write():
    # a DECIMAL dimension (jaffle-shop's order_total_dim): the slice holds the profile's plain value
    c = grouped("comparison", groups=(12.35, 99))
    rows = [("gold", Decimal("12.35"), 10.0), ("gold", Decimal("99.00"), 20.0),
            ("base", Decimal("12.35"), 11.0), ("base", Decimal("99.00"), 20.0)]
    result = answer(c, AOV, GROUPED_COLUMNS, rows)
    assert result["gold"] == {"group_a": 12.35, "group_b": 99, "value_a": 10.0, "value_b": 20.0, "higher": 99}
    json.dumps(result)


def test_ranking_tie_below_six_decimals_is_a_tie():
    rows = [("gold", "SP", 2.0000001, 1), ("gold", "RJ", 2.0, 2), ("base", "SP", 3.0, 1), ("base", "RJ", 1.0, 2)]
    with pytest.raises(NotScorable, match="tied values"):
        answer(candidate("ranking", k=2), AOV, RANKING_COLUMNS, rows)


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
    # 0.934: 0.93 is within the answer's tolerance (0.005) of it, 0.92 is not
    [(10.5, 10.0, "PASS"), (10.0, 11.0, "FAIL"), (0.934, 0.92, "PASS"), (-12.3, -12.0, "FAIL"), (0.0, 1.0, "FAIL"),
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


# --- the new analysis types ---------------------------------------------------------------------------------------

PAID_AT = Skeleton("paid_rate", "model.shop.orders.ordered_at", "temporal", ("paid_definition",),
                   ("model.shop.orders",))
SERIES_COLUMNS = ["variant", "period", "value"]
GROUPED_COLUMNS = ["variant", "state", "value"]
STATS_COLUMNS = ["variant", "state", "n", "mean", "variance"]


def trend(encoding: str = "timestamp") -> Candidate:
    period = '"FLOOR(ordered_at / 100)"' if encoding == "yymmdd" else "dbt.date_trunc('month', \"ordered_at\")"
    return Candidate(PAID_AT, "trend_analysis", [], [], "series", None, period=period, encoding=encoding)


def grouped(analysis_type: str, groups=("SP", "RJ")) -> Candidate:
    skeleton = Skeleton("avg_order_value", "model.shop.customers.state", "spatial", ("exclude_tests",), TABLES)
    shape = {"comparison": "grouped", "significance_testing": "stats", "decomposition": "grouped"}[analysis_type]
    slice_ = {"groups": list(groups)} if analysis_type != "decomposition" else {}
    return Candidate(skeleton, analysis_type, [], ["state"], shape, None, slice=slice_)


def series(variant: str, values, start=(2017, 7)) -> list[tuple]:
    y, m = start
    out = []
    for v in values:
        out.append((variant, datetime(y, m, 1), v))
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def test_period_label():
    assert period_label(datetime(2017, 7, 1), "timestamp") == "2017-07"
    assert period_label(date(2018, 1, 1), "timestamp") == "2018-01"
    assert period_label(datetime(2017, 12, 1, 0, 0), "") == "2017-12"
    # FLOOR(yymmdd / 100): an integer, or a float on engines whose division is exact
    assert period_label(9707, "yymmdd") == "1997-07"
    assert period_label(9801.0, "yymmdd") == "1998-01"
    assert period_label(Decimal("9612"), "yymmdd") == "1996-12"


def test_trend_increasing():
    # rows in any order; the series runs by month
    rows = [*reversed(series("gold", [10.0, 12.0, 15.0, 11.0])), *series("base", [10.0, 9.0, 8.5, 8.0])]
    assert answer(trend(), PAID, SERIES_COLUMNS, rows) == {
        "gold": {"direction": "increasing", "total_change_pct": 10.0, "peak_period": "2017-09"},
        "base": {"direction": "decreasing", "total_change_pct": -20.0, "peak_period": "2017-07"},
        "answer_format": {"type": "trend", "grain": "month", "flat_band_pct": 5.0, "unit": "share of orders",
                          "format": "percent"},
        "tolerance": {"rel_tol": 0.001, "abs_tol": 0.0005},
    }


@pytest.mark.parametrize(("values", "expected"), [
    # the least-squares line over x = 0, 1, 2 changes by -0.05 against a mean of 0.45: -11 %
    ([0.5, 0.4, 0.45], {"direction": "decreasing", "total_change_pct": -10.0, "peak_period": "2017-07"}),
    ([0.4, 0.45, 0.5], {"direction": "increasing", "total_change_pct": 25.0, "peak_period": "2017-09"}),
    # a peak in the middle does not tilt the line: +0.99 against a mean of 107.3 is flat
    ([100.0, 120.0, 100.99], {"direction": "flat", "total_change_pct": 0.99, "peak_period": "2017-08"}),
    ([100.0, 120.0, 99.01], {"direction": "flat", "total_change_pct": -0.99, "peak_period": "2017-08"}),
    # a, a, a + d: the line changes by d against a mean of a + d/3 (4 / 101.3 = 3.9 %: flat; 6.4 %; -6.6 %)
    ([100.0, 100.1, 104.0], {"direction": "flat", "total_change_pct": 4.0, "peak_period": "2017-09"}),
    ([100.0, 100.1, 106.5], {"direction": "increasing", "total_change_pct": 6.5, "peak_period": "2017-09"}),
    ([100.0, 100.1, 93.5], {"direction": "decreasing", "total_change_pct": -6.5, "peak_period": "2017-08"}),
    # the end points say +5 %, the line through every month says -9 %: the line decides
    ([10.0, 14.0, 13.0, 12.0, 11.0, 10.5], {"direction": "decreasing", "total_change_pct": 5.0,
                                              "peak_period": "2017-08"}),
    # a negative start: the change is relative to its size
    ([-10.0, -12.0, -5.0], {"direction": "increasing", "total_change_pct": 50.0, "peak_period": "2017-09"}),
    # six decimals of percent, like every number an answer shows
    ([3.0, 1.0, 1.0, 4.0], {"direction": "increasing", "total_change_pct": 33.333333, "peak_period": "2017-10"}),
    # months without a value are left out (the line keeps each month at its place): the last month with one
    # ends the series; the peak is in 2018
    ([2.0, None, 2.5, 2.1, 1.0, 3.0, 9.0, 3.0, None], {"direction": "increasing", "total_change_pct": 50.0,
                                                      "peak_period": "2018-01"}),
])
def test_trend_values(values, expected):
    rows = series("gold", values) + series("base", [1.0, 2.0, 3.0])
    assert answer(trend(), PAID, SERIES_COLUMNS, rows)["gold"] == expected


def test_trend_of_yymmdd_periods():
    rows = [("gold", 9711.0, 5.0), ("gold", 9712.0, 6.0), ("gold", 9801.0, 7.5),
            ("base", 9711, 5.0), ("base", 9712, 4.0), ("base", 9801, 4.5)]
    result = answer(trend("yymmdd"), PAID, SERIES_COLUMNS, rows)
    assert result["gold"] == {"direction": "increasing", "total_change_pct": 50.0, "peak_period": "1998-01"}
    assert result["base"] == {"direction": "decreasing", "total_change_pct": -10.0, "peak_period": "1997-11"}


@pytest.mark.parametrize(("gold", "message"), [
    ([1.0, 2.0], "a trend needs 3 periods with values, got 2"),
    ([1.0, None, 2.0], "a trend needs 3 periods with values, got 2"),
    ([], "a trend needs 3 periods with values, got 0"),
    ([0.0, 1.0, 2.0], "the first period is 0: the change has no percentage"),
    ([-1.0, 0.0, 1.0], "the average monthly value is 0: the flat band has no width"),
    # the line changes by 5.2 against a mean of 101.8: 5.1 %, within half a point of the band's edge
    ([100.0, 100.1, 105.2], "the trend line ends at the edge of the flat band: its direction is a coin toss"),
    ([1.0, 3.0, 2.0, 3.0], "two periods share the peak value"),
    ([5.0, 1.0, 5.0], "two periods share the peak value"),
])
def test_trend_not_scorable(gold, message):
    rows = series("gold", gold) + series("base", [1.0, 2.0, 3.0])
    with pytest.raises(NotScorable) as info:
        answer(trend(), PAID, SERIES_COLUMNS, rows)
    assert str(info.value) == message


def test_trend_base_is_checked_too():
    rows = series("gold", [1.0, 2.0, 3.0]) + series("base", [1.0, 2.0])
    with pytest.raises(NotScorable, match="got 2"):
        answer(trend(), PAID, SERIES_COLUMNS, rows)


@pytest.mark.parametrize("noisy", ["2017-08", "2017-09"])
def test_trend_peak_tie_within_float_noise(noisy):
    values = [0.1, 0.1 + 0.2 if noisy == "2017-08" else 0.3, 0.1 + 0.2 if noisy == "2017-09" else 0.3]
    assert values[1] != values[2] and _number(values[1]) == _number(values[2])
    rows = series("gold", values) + series("base", [1.0, 2.0, 3.0])
    with pytest.raises(NotScorable, match="two periods share the peak value"):
        answer(trend(), PAID, SERIES_COLUMNS, rows)


def test_comparison():
    # other groups are ignored
    rows = [("gold", "SP", 120.5), ("gold", "RJ", Decimal("130.2500001")), ("gold", "MG", 999.0),
            ("base", "RJ", 101.0), ("base", "SP", 110.123456789)]
    assert answer(grouped("comparison"), AOV, GROUPED_COLUMNS, rows) == {
        "gold": {"group_a": "SP", "group_b": "RJ", "value_a": 120.5, "value_b": 130.25, "higher": "RJ"},
        "base": {"group_a": "SP", "group_b": "RJ", "value_a": 110.123457, "value_b": 101.0, "higher": "SP"},
        "answer_format": {"type": "comparison", "key": "state", "unit": "BRL", "format": "currency"},
        "tolerance": {"rel_tol": 0.001, "abs_tol": 0.005},
    }


def test_comparison_keeps_the_order_of_the_groups():
    rows = [("gold", "SP", 1.0), ("gold", "RJ", 2.0), ("base", "SP", 1.0), ("base", "RJ", 3.0)]
    result = answer(grouped("comparison", groups=("RJ", "SP")), AOV, GROUPED_COLUMNS, rows)
    assert result["gold"] == {"group_a": "RJ", "group_b": "SP", "value_a": 2.0, "value_b": 1.0, "higher": "RJ"}


@pytest.mark.parametrize(("gold", "message"), [
    ([("SP", 2.0), ("RJ", 2.0)], "the two groups are equal"),
    ([("SP", 2.0000001), ("RJ", 2.0)], "the two groups are equal"),  # equal at six decimals
    ([("SP", 2.0)], "a compared group has no rows"),
    ([("RJ", 2.0), ("MG", 1.0)], "a compared group has no rows"),
    ([("SP", None), ("RJ", 2.0)], "the value is NULL"),
])
def test_comparison_not_scorable(gold, message):
    rows = [("gold", k, v) for k, v in gold] + [("base", "SP", 1.0), ("base", "RJ", 3.0)]
    with pytest.raises(NotScorable) as info:
        answer(grouped("comparison"), AOV, GROUPED_COLUMNS, rows)
    assert str(info.value) == message


SAMPLE_SP = [12.0, 15.5, 9.0, 11.25, 14.0, 13.5]
SAMPLE_RJ = [18.0, 16.5, 21.0, 17.25, 19.5]
SAMPLE_MG = [10.0, 14.0, 12.5, 9.5, 16.0]


def stats_row(variant: str, key: str, sample: list[float]) -> tuple:
    # what var_samp / avg / count return for the sample
    return (variant, key, len(sample), statistics.mean(sample), statistics.variance(sample))


def welch_p_by_hand(a: list[float], b: list[float]) -> float:
    """Welch's two-tailed p-value: t and Welch-Satterthwaite df, then the Student t tail by Simpson's rule."""
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    t = (statistics.mean(a) - statistics.mean(b)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    # p = I_x(df/2, 1/2), x = df / (df + t^2): the regularized incomplete beta. With s = 1 - u^2 its integral
    # of s^(df/2 - 1) (1 - s)^(-1/2) ds over [0, x] is that of 2 (1 - u^2)^(df/2 - 1) du over [sqrt(1 - x), 1].
    x, a_ = df / (df + t * t), df / 2
    lo, n = math.sqrt(1 - x), 4000
    h = (1 - lo) / n
    f = [2 * (1 - (lo + i * h) ** 2) ** (a_ - 1) for i in range(n + 1)]
    integral = h / 3 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))
    beta = math.exp(math.lgamma(a_) + math.lgamma(0.5) - math.lgamma(a_ + 0.5))
    return integral / beta


def test_significance():
    rows = [stats_row("gold", "SP", SAMPLE_SP), stats_row("gold", "RJ", SAMPLE_RJ),
            stats_row("base", "SP", SAMPLE_SP), stats_row("base", "RJ", SAMPLE_MG)]
    rows[3] = ("base", "RJ", *rows[3][2:])
    result = answer(grouped("significance_testing"), AOV, STATS_COLUMNS, rows)
    assert result["gold"] == {"significant": True, "p_value": 0.001, "test_name": "Welch's t-test (two-tailed)",
                              "group_a": "SP", "group_b": "RJ", "mean_a": 12.541667, "mean_b": 18.45}
    assert result["base"] == {"significant": False, "p_value": 0.9288, "test_name": "Welch's t-test (two-tailed)",
                              "group_a": "SP", "group_b": "RJ", "mean_a": 12.541667, "mean_b": 12.4}
    assert result["answer_format"] == {"type": "significance", "key": "state", "alpha": 0.05, "unit": "BRL",
                                       "format": "currency"}
    # the p-values are those of Welch's test on the raw values, by scipy and by hand
    assert result["gold"]["p_value"] == round(ttest_ind(SAMPLE_SP, SAMPLE_RJ, equal_var=False).pvalue, 4)
    assert result["base"]["p_value"] == round(ttest_ind(SAMPLE_SP, SAMPLE_MG, equal_var=False).pvalue, 4)
    assert welch_p_by_hand(SAMPLE_SP, SAMPLE_RJ) == pytest.approx(0.00100794879, abs=1e-9)
    assert welch_p_by_hand(SAMPLE_SP, SAMPLE_MG) == pytest.approx(0.92884393, abs=1e-7)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_significance_matches_scipy_on_raw_samples(seed):
    rng = random.Random(seed)
    a = [round(rng.gauss(100, 15), 2) for _ in range(rng.randint(5, 40))]
    b = [round(rng.gauss(108, 25), 2) for _ in range(rng.randint(5, 40))]
    rows = [stats_row("gold", "SP", a), stats_row("gold", "RJ", b), stats_row("base", "SP", b),
            stats_row("base", "RJ", a)]
    result = answer(grouped("significance_testing"), AOV, STATS_COLUMNS, rows)
    p = ttest_ind(a, b, equal_var=False).pvalue
    assert result["gold"]["p_value"] == pytest.approx(p, abs=5e-5)
    assert result["gold"]["p_value"] == result["base"]["p_value"]
    assert result["gold"]["significant"] is bool(p < 0.05)
    assert (result["gold"]["mean_a"], result["base"]["mean_b"]) == (round(statistics.mean(a), 6),) * 2


def test_welch_p_value_is_scipys_from_summary_statistics():
    rng = random.Random(7)
    for _ in range(2000):
        a = (rng.uniform(-100, 100), rng.uniform(0.01, 50), rng.randint(2, 5000))
        b = (rng.uniform(-100, 100), rng.uniform(0.01, 50), rng.randint(2, 5000))
        expected = float(ttest_ind_from_stats(*a, *b, equal_var=False).pvalue)
        assert enrich.welch_p_value(*a, *b) == pytest.approx(expected, rel=1e-11, abs=0)


@pytest.mark.parametrize(("gold", "message"), [
    ([("SP", 5, 10.0, 2.0)], "a compared group has no rows"),
    ([("SP", 5, 10.0, 2.0), ("MG", 5, 12.0, 2.0)], "a compared group has no rows"),
    ([("SP", 1, 10.0, None), ("RJ", 5, 12.0, 2.0)], "a group has fewer than 2 values or no variance"),
    ([("SP", 5, 10.0, 2.0), ("RJ", 0, None, None)], "a group has fewer than 2 values or no variance"),
    ([("SP", 5, 10.0, 0.0), ("RJ", 5, 12.0, 2.0)], "a group has fewer than 2 values or no variance"),
    ([("SP", 5, 10.0, 2.0), ("RJ", None, 12.0, 2.0)], "a group has fewer than 2 values or no variance"),
])
def test_significance_not_scorable(gold, message):
    rows = [("gold", *g) for g in gold] + [("base", "SP", 5, 10.0, 2.0), ("base", "RJ", 5, 11.0, 2.0)]
    with pytest.raises(NotScorable) as info:
        answer(grouped("significance_testing"), AOV, STATS_COLUMNS, rows)
    assert str(info.value) == message


def test_decomposition_sorted_by_key():
    rows = [("gold", "SP", 120.1234567), ("gold", "DF", 300.0), ("gold", None, 5.0), ("gold", "RJ", None),
            ("base", "RJ", 99.5), ("base", "SP", 101.0)]
    assert answer(grouped("decomposition"), AOV, GROUPED_COLUMNS, rows) == {
        # NULL keys last; a group without a value keeps its place
        "gold": [{"state": "DF", "value": 300.0}, {"state": "RJ", "value": None}, {"state": "SP", "value": 120.123457},
                 {"state": None, "value": 5.0}],
        "base": [{"state": "RJ", "value": 99.5}, {"state": "SP", "value": 101.0}],
        "answer_format": {"type": "breakdown", "key": "state", "unit": "BRL", "format": "currency"},
        "tolerance": {"rel_tol": 0.001, "abs_tol": 0.005},
    }


@pytest.mark.parametrize(("gold", "message"), [
    ([], "the breakdown is empty"),
    ([("SP", None), ("RJ", None)], "every group is NULL"),
])
def test_decomposition_not_scorable(gold, message):
    rows = [("gold", k, v) for k, v in gold] + [("base", "SP", 1.0)]
    with pytest.raises(NotScorable) as info:
        answer(grouped("decomposition"), AOV, GROUPED_COLUMNS, rows)
    assert str(info.value) == message


def test_counterfactual_is_answered_like_a_point_query():
    skeleton = Skeleton("avg_order_value", "model.shop.customers.state", "spatial", ("exclude_tests",), TABLES)
    c = Candidate(skeleton, "counterfactual", ["state = 'SP'"], [], "value", None,
                  slice={"state": "SP", "withdrawn_rule": "exclude_tests"}, gold_rules=(),
                  base_rules=("exclude_tests",))
    rows = [("base", Decimal("12.3456789")), ("gold", 10.0)]
    assert answer(c, AOV, VALUE_COLUMNS, rows) == {
        "gold": {"value": 10.0},
        "base": {"value": 12.345679},
        "answer_format": {"type": "value", "unit": "BRL", "format": "currency"},
        "tolerance": {"rel_tol": 0.001, "abs_tol": 0.005},
    }
    with pytest.raises(NotScorable, match="expected one row, got 0"):
        answer(c, AOV, VALUE_COLUMNS, [("base", 1.0)])


def test_a_counterfactual_keeps_its_rule_free_answer_apart_from_its_base():
    # its base applies every rule, the withdrawn one included: the answer under no rule is a third variant
    skeleton = Skeleton("avg_order_value", "model.shop.customers.state", "spatial", ("exclude_tests", "vat"), TABLES)
    c = Candidate(skeleton, "counterfactual", ["state = 'SP'"], [], "value", None,
                  slice={"state": "SP", "withdrawn_rule": "exclude_tests"}, gold_rules=("vat",),
                  base_rules=("exclude_tests", "vat"))
    rows = [("base", 12.0), ("gold", 10.0), ("rule_free", Decimal("9.1234567"))]
    result = answer(c, AOV, VALUE_COLUMNS, rows)
    assert (result["gold"], result["base"], result["rule_free"]) == ({"value": 10.0}, {"value": 12.0},
                                                                     {"value": 9.123457})
    # no value under no rule (NULL): the task stands without one
    assert "rule_free" not in answer(c, AOV, VALUE_COLUMNS, [("base", 12.0), ("gold", 10.0), ("rule_free", None)])


# --- _number: six decimals, whatever order the engine summed in -----------------------------------------------


@pytest.mark.parametrize(("value", "digits", "expected"), [
    (121.38218749999999, 6, 121.382188),  # the same average, summed in two orders
    (121.3821875000001, 6, 121.382188),
    (121.3821875, 6, 121.382188),  # half: to even
    (121.3821865, 6, 121.382186),
    (0.0000005, 6, 0.0),
    (0.0000015, 6, 0.000002),
    (0.0000025, 6, 0.000002),
    (2.5, 0, 2.0),
    (3.5, 0, 4.0),
    (0.04996, 4, 0.05),
    (Decimal("12.3456785"), 6, 12.345678),
    (7, 6, 7.0),
    # twelve significant digits first: a large value keeps fewer decimals
    (123456789.1234567, 6, 123456789.123),
    (1234567.891234567, 6, 1234567.89123),
])
def test_number(value, digits, expected):
    assert _number(value, digits) == expected


PRICES = [39.98, 98.09, 90.16, 22.36, 61.61, 99.94, 78.66, 96.16, 11.73, 3.15, 77.87, 43.49, 91.24, 39.39, 32.41,
          78.04, 89.63, 91.05, 79.04, 66.06, 25.67, 38.99, 25.84, 86.71, 64.88, 3.48, 11.49, 27.11, 97.84, 8.01, 50.35,
          6.08]


def test_number_summation_order():
    # the average of 32 prices in cents is 54.2659375 exactly; summed in two orders it lands on either side
    as_listed, ascending = sum(PRICES) / 32, sum(sorted(PRICES)) / 32
    assert (as_listed, ascending) == (54.26593749999998, 54.26593750000001)
    assert (round(as_listed, 6), round(ascending, 6)) == (54.265937, 54.265938)  # plain rounding disagrees
    assert _number(as_listed) == _number(ascending) == 54.265938


@pytest.mark.parametrize("value", [-0.0, -0.0000004, -1e-12])
def test_number_no_negative_zero(value):
    assert math.copysign(1.0, _number(value)) == 1.0


@pytest.mark.parametrize(("value", "message"), [(None, "the value is NULL"), (float("nan"), "the value is nan"),
                                                (float("inf"), "the value is inf"),
                                                (float("-inf"), "the value is -inf")])
def test_number_not_scorable(value, message):
    with pytest.raises(NotScorable) as info:
        _number(value)
    assert str(info.value) == message


def test_point_query_rounds_the_same_whatever_the_order():
    a = answer(candidate("point_query"), AOV, VALUE_COLUMNS, [("base", 121.38218749999999), ("gold", 1.0)])
    b = answer(candidate("point_query"), AOV, VALUE_COLUMNS, [("base", 121.3821875000001), ("gold", 1.0)])
    assert a["base"] == b["base"] == {"value": 121.382188}


def test_trend_direction_is_the_least_squares_slope():
    """Against numpy's least-squares fit, on random monthly series (gaps included)."""
    import numpy

    from dptool.generate.enrich import FLAT_BAND_PCT, trend_direction

    rng = random.Random(12)
    checked = 0
    for _ in range(300):
        months = sorted(rng.sample(range(24), rng.randint(3, 12)))
        values = [round(rng.uniform(50, 150) + i * rng.uniform(-3, 3), 2) for i in months]
        series = [(f"{2017 + m // 12}-{m % 12 + 1:02d}", v) for m, v in zip(months, values, strict=True)]
        slope = numpy.polyfit(months, values, 1)[0]
        pct = slope * (months[-1] - months[0]) / abs(statistics.mean(values)) * 100
        if abs(abs(pct) - FLAT_BAND_PCT) < 0.5:
            with pytest.raises(NotScorable):
                trend_direction(series)
            continue
        expected = "flat" if abs(pct) < FLAT_BAND_PCT else ("increasing" if pct > 0 else "decreasing")
        assert trend_direction(series) == expected, series
        checked += 1
    assert checked > 250


# --- decided on unrounded values, rounded only as shown (issue 23, item 6) ----------------------------------------


def test_trend_change_of_small_shares_is_the_exact_change():
    # shares near 1 %: rounded to six decimals first, the change was -0.1 (t_1377: exact -0.1058, gold -0.11)
    values = [0.00945049, 0.0096, 0.0095, 0.00944051]
    gold = answer(trend(), PAID, SERIES_COLUMNS, series("gold", values) + series("base", [1.0, 2.0, 3.0]))["gold"]
    exact = (values[-1] - values[0]) / values[0] * 100
    assert gold["total_change_pct"] == round(exact, 6) == -0.105603


def test_trend_direction_of_small_values_is_the_unrounded_lines():
    # values of 1e-5: six decimals make them 0.00001 and 0.000011, and the line through those rises by 10 %;
    # through the values themselves it changes by less than the flat band
    values = [1.025e-05, 9.13e-06, 9.03e-06, 1.067e-05]
    gold = answer(trend(), PAID, SERIES_COLUMNS, series("gold", values) + series("base", [1.0, 2.0, 3.0]))["gold"]
    assert gold == {"direction": "flat", "total_change_pct": 4.097561, "peak_period": "2017-10"}


def test_trend_peak_below_six_decimals_is_the_higher_month():
    # two months equal at six decimals and not below: the peak is the higher one (a tie once rounded before)
    values = [0.1, 0.1234564, 0.1234556]
    gold = answer(trend(), PAID, SERIES_COLUMNS, series("gold", values) + series("base", [1.0, 2.0, 3.0]))["gold"]
    assert gold["peak_period"] == "2017-08"


def test_a_rule_that_moves_a_trend_only_by_rounding_has_no_effect():
    """The gold/base split of t_0336 (-3.42 against -3.43) came from rounding the monthly values: computed from the
    values themselves, gold and base are within the tolerance of each other, and validation drops the task."""
    from dptool.generate.validate import issues

    gold_values, base_values = [0.01718824, 0.03, 0.01639132], [0.01718837, 0.03, 0.01639157]
    c = Candidate(PAID_AT, "trend_analysis", [], [], "series", None, period="x", encoding="timestamp")
    result = answer(c, PAID, SERIES_COLUMNS, series("gold", gold_values) + series("base", base_values))
    assert (result["gold"]["total_change_pct"], result["base"]["total_change_pct"]) == (-4.636426, -4.635693)
    task = {"task_id": "t_0001", "analysis_type": "trend_analysis", "rule_ids": ["paid_definition"],
            "question": f"How did the paid share develop month by month in 2017? Decide its direction thus: "
                        f"{enrich.TREND_RULE}.", "dimension": "ordered_at", "slice": {}, **result}
    assert issues(task, SHOP, set()) == ["rule_without_effect"]


def test_significance_verdict_is_the_exact_p_values():
    # p = 0.049975: shown with four decimals it is 0.05, whose verdict ("not significant") the exact p contradicts
    rows = [("gold", "SP", 30, 10.0, 4.0), ("gold", "RJ", 30, 11.0338, 4.0),
            ("base", "SP", 30, 10.0, 4.0), ("base", "RJ", 30, 13.0, 4.0)]
    with pytest.raises(NotScorable, match=r"the p-value 0.0499748 rounds to alpha \(0.05\)"):
        answer(grouped("significance_testing"), AOV, STATS_COLUMNS, rows)
    rows[1] = ("gold", "RJ", 30, 11.0339, 4.0)  # p = 0.049953: 0.05 too
    with pytest.raises(NotScorable, match="rounds to alpha"):
        answer(grouped("significance_testing"), AOV, STATS_COLUMNS, rows)
    rows[1] = ("gold", "RJ", 30, 11.0336, 4.0)  # p = 0.050018: not significant, and shown as 0.05
    assert answer(grouped("significance_testing"), AOV, STATS_COLUMNS, rows)["gold"]["significant"] is False

