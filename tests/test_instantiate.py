"""Stage 4: candidates from skeletons — analysis types, windows, slice values, groups, periods and k."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

from dptool.generate.ids import Ids, candidate_key
from dptool.generate.instantiate import (
    MAX_BREAKDOWN_GROUPS,
    MIN_GROUP_ROWS,
    MIN_SLICE_ROWS,
    Window,
    _is_avg,
    instantiate,
    period_expression,
    window_predicates,
    windows,
)
from dptool.generate.profile import DimensionProfile
from dptool.generate.sample import Skeleton
from dptool.project.catalog import load_catalog
from dptool.sql import in_window

FIXTURES = Path(__file__).parent / "fixtures"
SHOP = load_catalog(json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8")))
AOV_TABLES = ("model.shop.customers", "model.shop.orders", "model.shop.payments")
STATE, CITY = "model.shop.customers.state", "model.shop.customers.city"
STATUS, METHOD, ORDERED_AT = "model.shop.orders.status", "model.shop.payments.method", "model.shop.orders.ordered_at"


def months(first: tuple[int, int], last: tuple[int, int], rows: int = 100) -> tuple[tuple[int, int, int], ...]:
    out, (y, m) = [], first
    while (y, m) <= last:
        out.append((y, m, rows))
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return tuple(out)


PROFILES = {
    CITY: DimensionProfile(40, (("São Paulo", 300), ("Sant'Ana", 120), ("Rio de Janeiro", 90), ("Campinas", 41),
                                ("Boa Vista", 39))),
    STATE: DimensionProfile(27, (("SP", 500), ("RJ", 200), ("MG", 100), ("DF", 12))),
    STATUS: DimensionProfile(2, (("paid", 900), ("not_paid", 100))),
    METHOD: DimensionProfile(4, (("card", 700), ("boleto", 200), ("voucher", 50), ("debit_card", 10))),
    ORDERED_AT: DimensionProfile(540, months=months((2017, 1), (2018, 6)), encoding="timestamp"),
}
SKELETONS = [
    Skeleton("avg_order_value", STATE, "spatial", ("capital_override",), AOV_TABLES),
    Skeleton("avg_order_value", CITY, "spatial", (), AOV_TABLES),
    Skeleton("paid_rate", STATUS, "categorical", ("paid_definition",), ("model.shop.orders",)),
    Skeleton("paid_rate", ORDERED_AT, "temporal", (), ("model.shop.orders",)),
    Skeleton("avg_order_value", METHOD, "categorical", ("exclude_tests",), AOV_TABLES),
]


def W(start: date, end: date, label: str) -> Window:
    return Window(start, end, label)


# --- windows ------------------------------------------------------------------------------------------------------


def test_windows_of_full_years():
    found = windows(DimensionProfile(15, months=months((2017, 1), (2018, 3))))
    assert found == [
        W(date(2017, 1, 1), date(2017, 4, 1), "Q1 2017"),
        W(date(2017, 4, 1), date(2017, 7, 1), "Q2 2017"),
        W(date(2017, 7, 1), date(2017, 10, 1), "Q3 2017"),
        W(date(2017, 10, 1), date(2018, 1, 1), "Q4 2017"),
        W(date(2017, 1, 1), date(2017, 7, 1), "the first half of 2017"),
        W(date(2017, 7, 1), date(2018, 1, 1), "the second half of 2017"),
        W(date(2017, 1, 1), date(2018, 1, 1), "2017"),
        W(date(2018, 1, 1), date(2018, 4, 1), "Q1 2018"),
    ]


@pytest.mark.parametrize("gap", [None, 0])
def test_windows_skip_a_month_without_data(gap):
    rows = [r for r in months((2017, 1), (2017, 12)) if r[1] != 5]
    if gap is not None:
        rows.append((2017, 5, gap))
    assert [w.label for w in windows(DimensionProfile(11, months=tuple(rows)))] == [
        "Q1 2017", "Q3 2017", "Q4 2017", "the second half of 2017"]


def test_windows_need_their_share_of_rows():
    # Q4 2016 holds 3 of 1203 rows, under the 3 % a window must hold
    rows = ((2016, 10, 1), (2016, 11, 1), (2016, 12, 1), *months((2017, 1), (2017, 12)))
    labels = [w.label for w in windows(DimensionProfile(15, months=rows))]
    assert "Q4 2016" not in labels
    assert labels == ["Q1 2017", "Q2 2017", "Q3 2017", "Q4 2017", "the first half of 2017", "the second half of 2017",
                      "2017"]


@pytest.mark.parametrize(("march", "kept"), [(10, True), (9, False)])
def test_windows_share_boundary(march, kept):
    # total 1000 (or 999): Q1 2017 holds 30, exactly 3 %, and is kept; 29 of 999 is under 3 %
    rows = ((2017, 1, 10), (2017, 2, 10), (2017, 3, march), *months((2017, 4), (2017, 8), rows=194))
    assert ("Q1 2017" in [w.label for w in windows(DimensionProfile(8, months=rows))]) is kept


def test_windows_without_months():
    assert windows(DimensionProfile(0)) == []


# --- instantiate --------------------------------------------------------------------------------------------------


def test_candidates_in_order():
    out = instantiate(SKELETONS, SHOP, PROFILES, seed=42, dialect="duckdb")
    assert [(c.skeleton.id, c.analysis_type, c.shape) for c in out] == [
        ("avg_order_value__state__capital_override", "point_query", "value"),
        ("avg_order_value__state__capital_override", "ranking", "ranking"),
        ("avg_order_value__state__capital_override", "threshold_crossing", "value"),
        ("avg_order_value__state__capital_override", "comparison", "grouped"),
        ("avg_order_value__state__capital_override", "significance_testing", "stats"),
        ("avg_order_value__state__capital_override", "decomposition", "grouped"),
        ("avg_order_value__state__capital_override", "counterfactual", "value"),
        ("avg_order_value__city", "point_query", "value"),
        ("avg_order_value__city", "ranking", "ranking"),
        ("avg_order_value__city", "threshold_crossing", "value"),
        ("avg_order_value__city", "comparison", "grouped"),
        ("avg_order_value__city", "significance_testing", "stats"),
        # city has 40 values, over the 30 a breakdown lists; no rule, so no counterfactual
        # status has 2 values: no ranking, but a comparison, a test and a breakdown
        ("paid_rate__status__paid_definition", "point_query", "value"),
        ("paid_rate__status__paid_definition", "threshold_crossing", "value"),
        ("paid_rate__status__paid_definition", "comparison", "grouped"),
        ("paid_rate__status__paid_definition", "significance_testing", "stats"),
        ("paid_rate__status__paid_definition", "decomposition", "grouped"),
        ("paid_rate__status__paid_definition", "counterfactual", "value"),
        # the time dimension: no groups, a trend; no rule, so no counterfactual
        ("paid_rate__ordered_at", "point_query", "value"),
        ("paid_rate__ordered_at", "threshold_crossing", "value"),
        ("paid_rate__ordered_at", "trend_analysis", "series"),
        # four payment methods, two of them with enough payments in a year to be ranked: no ranking
        ("avg_order_value__method__exclude_tests", "point_query", "value"),
        ("avg_order_value__method__exclude_tests", "threshold_crossing", "value"),
        ("avg_order_value__method__exclude_tests", "comparison", "grouped"),
        ("avg_order_value__method__exclude_tests", "significance_testing", "stats"),
        ("avg_order_value__method__exclude_tests", "decomposition", "grouped"),
        ("avg_order_value__method__exclude_tests", "counterfactual", "value"),
    ]
    # each id is the hash of what the candidate asks (dptool.generate.ids), behind its type's prefix
    assert [c.task_id for c in out] == [Ids()(candidate_key(c, SHOP.metrics[c.metric].domain)) for c in out]
    assert [c.task_id.split("_")[0] for c in out[:7]] == ["pq", "rk", "thr", "cmp", "sig", "dec", "cf"]
    assert {c.encoding for c in out} == {"timestamp"}


def test_types_give_the_candidates_and_ids_of_a_run_of_every_type():
    out = instantiate(SKELETONS, SHOP, PROFILES, seed=42, dialect="duckdb", types=("trend_analysis", "counterfactual"))
    assert [(c.skeleton.id, c.analysis_type) for c in out] == [
        ("avg_order_value__state__capital_override", "counterfactual"),
        ("paid_rate__status__paid_definition", "counterfactual"),
        ("paid_rate__ordered_at", "trend_analysis"),
        ("avg_order_value__method__exclude_tests", "counterfactual"),
    ]
    # the same candidates, ids included, as in a run of every type: the draw depends on skeleton and type only
    every = {(c.skeleton.id, c.analysis_type): c for c in instantiate(SKELETONS, SHOP, PROFILES, seed=42,
                                                                      dialect="duckdb")}
    for c in out:
        assert c == every[(c.skeleton.id, c.analysis_type)]
    assert instantiate(SKELETONS, SHOP, PROFILES, seed=42, dialect="duckdb", types=()) == []


def test_a_question_asked_twice_is_made_once():
    ids = Ids()
    first = instantiate(SKELETONS, SHOP, PROFILES, seed=42, dialect="duckdb", ids=ids)
    assert instantiate(SKELETONS, SHOP, PROFILES, seed=42, dialect="duckdb", ids=ids) == []
    assert len({c.task_id for c in first}) == len(first)


def test_deterministic_for_a_seed():
    first = instantiate(SKELETONS, SHOP, PROFILES, seed=42, dialect="duckdb")
    again = instantiate(SKELETONS, SHOP, PROFILES, seed=42, dialect="duckdb")
    assert first == again


def test_another_seed_draws_other_values():
    first = instantiate(SKELETONS, SHOP, PROFILES, seed=42, dialect="duckdb")
    other = instantiate(SKELETONS, SHOP, PROFILES, seed=7, dialect="duckdb")
    assert [c.slice for c in first] != [c.slice for c in other]
    assert [c.analysis_type for c in first] == [c.analysis_type for c in other]
    # another slice is another question: another id
    assert {c.task_id for c, o in zip(first, other, strict=True) if c.slice != o.slice}.isdisjoint(
        {o.task_id for o in other})


def test_rule_applies_when_forces_slice_value():
    # DF has 12 rows, under the 40 a drawn slice value needs; capital_override applies when state = DF
    for seed in (1, 42, 99):
        out = instantiate(SKELETONS[:1], SHOP, PROFILES, seed=seed, dialect="duckdb")
        values = [c for c in out if c.shape == "value"]
        assert [c.analysis_type for c in values] == ["point_query", "threshold_crossing", "counterfactual"]
        assert [c.slice["state"] for c in values] == ["DF", "DF", "DF"]
        assert [c.where[-1] for c in values] == ["state = 'DF'", "state = 'DF'", "state = 'DF'"]
        # a comparison or a test puts the rule's value first, against a frequent value
        pairs = [c for c in out if "groups" in c.slice]
        assert [c.analysis_type for c in pairs] == ["comparison", "significance_testing"]
        for c in pairs:
            assert c.slice["groups"][0] == "DF"
            assert c.slice["groups"][1] in ("SP", "RJ", "MG")
            assert c.where[-1] == f"state IN ('DF', '{c.slice['groups'][1]}')"


def test_ranking_candidate():
    (c,) = [c for c in instantiate(SKELETONS[:1], SHOP, PROFILES, seed=42, dialect="duckdb") if c.shape == "ranking"]
    # SP, RJ and MG hold 30 orders in a year; DF's 12 orders in 18 months do not
    assert (c.analysis_type, c.group_by, c.k, c.min_rows) == ("ranking", ["state"], 3, MIN_GROUP_ROWS)
    assert MIN_GROUP_ROWS == 30
    assert c.slice["min_group_rows"] == 30
    # rankings read a half or a year, never a quarter
    assert (c.window.end - c.window.start).days > 100
    assert c.where == in_window("ordered_at", c.window.start, c.window.end, "duckdb")
    assert c.slice["window"] == {"start": c.window.start.isoformat(), "end": c.window.end.isoformat(),
                                 "label": c.window.label}


@pytest.mark.parametrize(("large", "small", "k"), [(27, 0, 5), (7, 20, 5), (6, 1, 3), (3, 24, 3), (2, 25, None)])
def test_ranking_k(large, small, k):
    """k counts the groups likely to hold 30 rows in the window (both variants: with a margin for what a rule
    excludes): a ranking never asks for more groups than qualify."""
    # 100 rows a group over 18 months: about 67 in a year; 40 rows: about 27, fewer than 30
    values = tuple((f"S{i:02d}", 100) for i in range(large)) + tuple((f"s{i:02d}", 40) for i in range(small))
    profiles = {**PROFILES, STATE: DimensionProfile(large + small, values[:25])}
    skeleton = Skeleton("avg_order_value", STATE, "spatial", (), AOV_TABLES)
    rankings = [c for c in instantiate([skeleton], SHOP, profiles, seed=42, dialect="duckdb") if c.shape == "ranking"]
    assert [c.k for c in rankings] == ([] if k is None else [k])


def test_slice_value_drawn_from_frequent_values():
    skeleton = Skeleton("avg_order_value", CITY, "spatial", (), AOV_TABLES)
    drawn = {}
    for seed in range(30):
        for c in instantiate([skeleton], SHOP, PROFILES, seed=seed, dialect="duckdb"):
            if c.shape == "value":
                drawn[c.slice["city"]] = c.where[-1]
    # Boa Vista has 39 rows, under the 40 a slice value needs
    assert drawn == {
        "São Paulo": "city = 'São Paulo'",
        "Sant'Ana": "city = 'Sant''Ana'",
        "Rio de Janeiro": "city = 'Rio de Janeiro'",
        "Campinas": "city = 'Campinas'",
    }


def test_no_frequent_value_drops_the_candidate():
    # no value holds 40 rows: no slice value, no pair to compare; 2 values: no ranking, but a breakdown
    profiles = {**PROFILES, STATUS: DimensionProfile(2, (("paid", 39), ("not_paid", 1)))}
    out = instantiate(SKELETONS[2:3], SHOP, profiles, seed=42, dialect="duckdb")
    assert [(c.analysis_type, c.group_by) for c in out] == [("decomposition", ["status"])]


def test_temporal_dimension_gets_only_a_window():
    out = instantiate(SKELETONS[3:4], SHOP, PROFILES, seed=42, dialect="duckdb")
    assert [c.analysis_type for c in out] == ["point_query", "threshold_crossing", "trend_analysis"]
    for c in out:
        assert set(c.slice) == {"window"}
        assert c.where == in_window("ordered_at", c.window.start, c.window.end, "duckdb")
        assert (c.group_by, c.k, c.min_rows, c.rules, c.base_rules) == ([], None, None, (), ())
    assert [(c.shape, c.period) for c in out] == [
        ("value", None), ("value", None), ("series", "dbt.date_trunc('month', \"ordered_at\")")]


def test_no_window_without_months():
    profiles = {**PROFILES, ORDERED_AT: DimensionProfile(0)}
    out = instantiate(SKELETONS[2:3], SHOP, profiles, seed=42, dialect="duckdb")
    assert [(c.analysis_type, c.window, c.slice, c.where) for c in out] == [
        ("point_query", None, {"status": "paid"}, ["status = 'paid'"]),
        ("threshold_crossing", None, {"status": "not_paid"}, ["status = 'not_paid'"]),
        ("comparison", None, {"groups": ["not_paid", "paid"]}, ["status IN ('not_paid', 'paid')"]),
        ("significance_testing", None, {"groups": ["paid", "not_paid"]}, ["status IN ('paid', 'not_paid')"]),
        ("decomposition", None, {}, []),
        ("counterfactual", None, {"status": "not_paid", "withdrawn_rule": "paid_definition"}, ["status = 'not_paid'"]),
    ]
    # a trend needs months
    assert instantiate(SKELETONS[3:4], SHOP, profiles, seed=42, dialect="duckdb", types=("trend_analysis",)) == []


# --- long windows and the new analysis types -------------------------------------------------------------------

LONG = ("ranking", "decomposition", "trend_analysis", "comparison", "significance_testing")


def test_long_types_read_six_months_or_more():
    skeletons = [*SKELETONS, Skeleton("avg_order_value", STATE, "spatial", ("capital_override", "exclude_tests"),
                                      AOV_TABLES)]
    spans: dict[str, set[int]] = {}
    for seed in range(25):
        for c in instantiate(skeletons, SHOP, PROFILES, seed=seed, dialect="duckdb"):
            spans.setdefault(c.analysis_type, set()).add(c.window.months)
    assert set(spans) == {*LONG, "point_query", "threshold_crossing", "counterfactual"}
    for analysis_type in LONG:
        # rankings and significance tests read whole years where there are: every group needs rows
        assert spans[analysis_type] == ({12} if analysis_type in ("ranking", "significance_testing") else {6, 12}), \
            analysis_type
    for analysis_type in ("point_query", "threshold_crossing", "counterfactual"):
        assert spans[analysis_type] == {3, 6, 12}, analysis_type


def test_long_types_fall_back_to_a_quarter_but_a_trend_does_not():
    # only Q1 2017 holds data: rankings and breakdowns read it; a trend needs six months
    profiles = {**PROFILES, ORDERED_AT: DimensionProfile(90, months=months((2017, 1), (2017, 3)), encoding="timestamp")}
    out = instantiate(SKELETONS[2:4], SHOP, profiles, seed=42, dialect="duckdb")
    assert {c.window.label for c in out} == {"Q1 2017"}
    assert [c.analysis_type for c in out] == ["point_query", "threshold_crossing", "comparison", "significance_testing",
                                             "decomposition", "counterfactual", "point_query", "threshold_crossing"]


def test_trend_candidate():
    (c,) = instantiate(SKELETONS[3:4], SHOP, PROFILES, seed=42, dialect="duckdb", types=("trend_analysis",))
    assert (c.task_id[:3], c.analysis_type, c.shape, c.group_by, c.k, c.min_rows) == (
        "tr_", "trend_analysis", "series", [], None, None)
    assert c.period == "dbt.date_trunc('month', \"ordered_at\")"
    assert c.window == Window(date(2017, 7, 1), date(2018, 1, 1), "the second half of 2017")
    assert c.where == ["ordered_at >= CAST('2017-07-01 00:00:00' AS TIMESTAMP)",
                       "ordered_at < CAST('2018-01-01 00:00:00' AS TIMESTAMP)"]
    assert c.slice == {"window": {"start": "2017-07-01", "end": "2018-01-01", "label": "the second half of 2017"}}
    assert c.encoding == "timestamp"


def test_every_threshold_follows_the_minimum_support():
    """20 rows a month: at the default minimum (30 rows, with a margin) no month of a trend can rest on enough rows;
    at a minimum of 10, trends are drawn, and rankings and breakdowns ask for groups of 10 rows."""
    profiles = {**PROFILES, ORDERED_AT: DimensionProfile(240, months=months((2017, 1), (2017, 12), rows=20),
                                                         encoding="timestamp")}
    trend = dict(types=("trend_analysis",), support=True)
    assert instantiate(SKELETONS[3:4], SHOP, profiles, seed=42, dialect="duckdb", **trend) == []
    (c,) = instantiate(SKELETONS[3:4], SHOP, profiles, seed=42, dialect="duckdb", min_rows=10, **trend)
    assert c.analysis_type == "trend_analysis" and c.window.months >= 6
    grouped = instantiate(SKELETONS[2:3], SHOP, PROFILES, seed=42, dialect="duckdb", support=True, min_rows=12,
                          types=("ranking", "decomposition"))
    assert grouped and {(c.min_rows, c.slice["min_group_rows"]) for c in grouped} == {(12, 12)}
    default = instantiate(SKELETONS[2:3], SHOP, PROFILES, seed=42, dialect="duckdb", support=True,
                          types=("ranking", "decomposition"))
    assert {c.min_rows for c in default} == {MIN_GROUP_ROWS}


def test_trend_needs_a_temporal_dimension():
    # a skeleton that claims to be temporal on a spatial dimension gets no trend: the catalog decides
    odd = Skeleton("avg_order_value", STATE, "temporal", (), AOV_TABLES)
    assert instantiate([odd], SHOP, PROFILES, seed=42, dialect="duckdb", types=("trend_analysis",)) == []


def test_yymmdd_time_column():
    # a Berka-style integer date: windows compare integers, the period is the YYMM integer
    profiles = {**PROFILES, ORDERED_AT: DimensionProfile(540, months=months((1997, 1), (1998, 6)), encoding="yymmdd")}
    out = instantiate([SKELETONS[3], SKELETONS[0]], SHOP, profiles, seed=42, dialect="duckdb")
    assert {c.encoding for c in out} == {"yymmdd"}
    trend = next(c for c in out if c.analysis_type == "trend_analysis")
    assert trend.period == '"FLOOR(ordered_at / 100)"'
    assert trend.window.label == "the second half of 1997"
    assert trend.where == ["ordered_at >= 970701", "ordered_at <= 971231"]
    comparison = next(c for c in out if c.analysis_type == "comparison")
    assert comparison.where[:2] == [
        f"ordered_at >= {comparison.window.start:%y%m%d}",
        f"ordered_at <= {comparison.window.end - timedelta(days=1):%y%m%d}"]
    assert comparison.where[2] == f"state IN ('DF', '{comparison.slice['groups'][1]}')"


def test_comparison_candidate():
    out = instantiate(SKELETONS[1:2], SHOP, PROFILES, seed=42, dialect="duckdb", types=("comparison",))
    assert [(c.shape, c.group_by, c.k, c.min_rows, c.slice, c.where) for c in out] == [(
        "grouped", ["city"], None, None,
        {"window": {"start": "2017-01-01", "end": "2018-01-01", "label": "2017"}, "groups": ["Sant'Ana", "São Paulo"]},
        [*in_window("ordered_at", date(2017, 1, 1), date(2018, 1, 1), "duckdb"), "city IN ('Sant''Ana', 'São Paulo')"],
    )]


def test_compared_groups_are_two_frequent_values():
    pairs = set()
    for seed in range(40):
        for c in instantiate(SKELETONS[1:2], SHOP, PROFILES, seed=seed, dialect="duckdb",
                             types=("comparison", "significance_testing")):
            a, b = c.slice["groups"]
            assert a != b
            pairs.add(frozenset((a, b)))
    # Boa Vista has 39 rows, under the 40 a compared group needs
    frequent = ["São Paulo", "Sant'Ana", "Rio de Janeiro", "Campinas"]
    assert MIN_SLICE_ROWS == 40
    assert pairs == {frozenset((a, b)) for a in frequent for b in frequent if a != b}


@pytest.mark.parametrize(("top_values", "rules", "groups"), [
    ((("SP", 500),), (), None),  # one frequent value: nothing to compare
    ((("SP", 500), ("RJ", 39)), (), None),
    ((("SP", 500), ("RJ", 40)), (), {"SP", "RJ"}),
    ((("DF", 500), ("SP", 12)), ("capital_override",), None),  # the rule's value, and no other frequent value
    ((("SP", 500),), ("capital_override",), {"DF", "SP"}),  # the rule's value needs no rows of its own
])
def test_comparison_pair(top_values, rules, groups):
    profiles = {**PROFILES, STATE: DimensionProfile(27, top_values)}
    skeleton = Skeleton("avg_order_value", STATE, "spatial", rules, AOV_TABLES)
    out = instantiate([skeleton], SHOP, profiles, seed=42, dialect="duckdb", types=("comparison",))
    assert [set(c.slice["groups"]) for c in out] == ([] if groups is None else [groups])
    if rules and out:
        assert out[0].slice["groups"] == ["DF", "SP"]


def test_significance_candidate():
    out = instantiate(SKELETONS[4:5], SHOP, PROFILES, seed=42, dialect="duckdb", types=("significance_testing",))
    assert [(c.shape, c.group_by, c.slice["groups"], c.where[-1]) for c in out] == [
        ("stats", ["method"], ["card", "voucher"], "method IN ('card', 'voucher')")]


def test_significance_only_for_an_average():
    ratio = replace(SHOP.metrics["avg_order_value"], value="sum(amount) / count(*)")
    catalog = replace(SHOP, metrics={**SHOP.metrics, "avg_order_value": ratio})
    out = instantiate(SKELETONS[4:5], catalog, PROFILES, seed=42, dialect="duckdb")
    assert "significance_testing" not in [c.analysis_type for c in out]
    assert "comparison" in [c.analysis_type for c in out]


@pytest.mark.parametrize(("value", "is_avg"), [
    ("avg(amount)", True), ("AVG(amount)", True), ("avg(case when paid then 1 else 0 end)", True),
    ("avg(amount) / avg(freight)", False), ("sum(amount) / count(*)", False), ("count(*)", False),
    ("avg(amount) * 100", False), ("avg(", False),
])
def test_is_avg(value, is_avg):
    assert _is_avg(value) is is_avg


@pytest.mark.parametrize(("distinct", "kept"), [(1, False), (2, True), (27, True), (30, True), (31, False)])
def test_decomposition_group_count(distinct, kept):
    assert MAX_BREAKDOWN_GROUPS == 30
    profiles = {**PROFILES, STATE: replace(PROFILES[STATE], distinct=distinct)}
    skeleton = Skeleton("avg_order_value", STATE, "spatial", (), AOV_TABLES)
    out = instantiate([skeleton], SHOP, profiles, seed=42, dialect="duckdb", types=("decomposition",))
    assert [(c.shape, c.group_by, c.k, set(c.slice)) for c in out] == (
        [("grouped", ["state"], None, {"window"})] if kept else [])
    if kept:
        assert out[0].where == in_window("ordered_at", out[0].window.start, out[0].window.end, "duckdb")


def test_counterfactual_withdraws_one_rule():
    rules = ("capital_override", "exclude_tests")
    skeleton = Skeleton("avg_order_value", STATE, "spatial", rules, AOV_TABLES)
    withdrawn = {}
    for seed in range(12):
        (c,) = instantiate([skeleton], SHOP, PROFILES, seed=seed, dialect="duckdb", types=("counterfactual",))
        w = c.slice["withdrawn_rule"]
        withdrawn[w] = c
        assert (c.shape, c.group_by, c.base_rules) == ("value", [], rules)
        assert c.gold_rules == c.rules == tuple(r for r in rules if r != w)
        assert c.skeleton.rules == rules
        # the slice follows the rule conditional on state, withdrawn or not
        assert (c.slice["state"], c.where[-1]) == ("DF", "state = 'DF'")
    assert set(withdrawn) == set(rules)


def test_counterfactual_of_one_rule_keeps_every_other_rule_in_force():
    """"Suppose X had never been adopted, with every other policy still in force": the base applies every rule
    that governs the metric, the gold all but X, whichever rules the skeleton named (issue 12, t_0413)."""
    (c,) = instantiate(SKELETONS[4:5], SHOP, PROFILES, seed=42, dialect="duckdb", types=("counterfactual",))
    assert SKELETONS[4].rules == ("exclude_tests",)
    assert (c.slice["withdrawn_rule"], c.gold_rules, c.rules, c.base_rules) == (
        "exclude_tests", ("capital_override",), ("capital_override",), ("capital_override", "exclude_tests"))
    assert (c.rule_scope, c.withdrawn_rule) == ("all", "exclude_tests")
    assert c.slice == {"window": {"start": "2017-01-01", "end": "2017-04-01", "label": "Q1 2017"}, "method": "card",
                       "withdrawn_rule": "exclude_tests"}


def test_each_candidate_records_its_rule_scope():
    """`all` when the candidate applies every rule that governs its metric, `subset` when some, `none` when none;
    a counterfactual keeps every rule but the withdrawn one (scope `all`, withdrawn_rule set)."""
    both = ("capital_override", "exclude_tests")
    expected = {(): "none", ("capital_override",): "subset", ("exclude_tests",): "subset", both: "all"}
    for rules, scope in expected.items():
        skeleton = Skeleton("avg_order_value", STATE, "spatial", rules, AOV_TABLES)
        made = instantiate([skeleton], SHOP, PROFILES, seed=42, dialect="duckdb")
        assert made
        for c in made:
            if c.analysis_type == "counterfactual":
                assert (c.rule_scope, set(c.rules) | {c.withdrawn_rule}, c.base_rules) == ("all", set(both), both)
            else:
                assert (c.rule_scope, c.rules, c.withdrawn_rule) == (scope, rules, None), c.analysis_type
    # paid_rate has one rule: applying it is applying all of them
    (c, *_) = instantiate(SKELETONS[2:3], SHOP, PROFILES, seed=42, dialect="duckdb")
    assert c.rule_scope == "all"


def test_counterfactual_needs_a_rule():
    assert instantiate(SKELETONS[1:2], SHOP, PROFILES, seed=42, dialect="duckdb", types=("counterfactual",)) == []


def test_other_types_keep_the_skeleton_rules():
    for c in instantiate(SKELETONS, SHOP, PROFILES, seed=42, dialect="duckdb"):
        if c.analysis_type != "counterfactual":
            assert (c.gold_rules, c.rules, c.base_rules) == (None, c.skeleton.rules, ())


# --- window predicates and periods -----------------------------------------------------------------------------


def test_window_predicates():
    h2 = Window(date(1997, 7, 1), date(1998, 1, 1), "the second half of 1997")
    assert window_predicates("ordered_at", h2, "yymmdd", "duckdb") == ["ordered_at >= 970701", "ordered_at <= 971231"]
    assert window_predicates("ordered_at", h2, "timestamp", "duckdb") == in_window(
        "ordered_at", h2.start, h2.end, "duckdb")
    assert window_predicates("Order Date", h2, "yymmdd", "postgres") == [
        '"Order Date" >= 970701', '"Order Date" <= 971231']
    q1 = Window(date(2001, 1, 1), date(2001, 4, 1), "Q1 2001")
    assert window_predicates("d", q1, "yymmdd", "duckdb") == ["d >= 10101", "d <= 10331"]


def _rows_in(predicates: list[str], values: list[int]) -> int:
    con = duckdb.connect()
    try:
        rows = ", ".join(f"({v})" for v in values)
        return con.execute(f"select count(*) from (values {rows}) t(d) where {' and '.join(predicates)}").fetchone()[0]
    finally:
        con.close()


def test_yymmdd_window_holds_its_days():
    q3 = Window(date(1997, 7, 1), date(1997, 10, 1), "Q3 1997")
    days = [970630, 970701, 970815, 970930, 971001]
    assert _rows_in(window_predicates("d", q3, "yymmdd", "duckdb"), days) == 3


def test_yymmdd_window_ending_in_2000_holds_its_days():
    h2 = Window(date(1999, 7, 1), date(2000, 1, 1), "the second half of 1999")
    assert _rows_in(window_predicates("d", h2, "yymmdd", "duckdb"), [990701, 991015, 991231]) == 3


def test_period_expression():
    assert period_expression("ordered_at", "timestamp", "duckdb") == "dbt.date_trunc('month', \"ordered_at\")"
    assert period_expression("ordered_at", "yymmdd", "duckdb") == '"FLOOR(ordered_at / 100)"'
    # the column as the dialect quotes it, inside a Jinja string
    assert period_expression("Order Date", "timestamp", "duckdb") == "dbt.date_trunc('month', \"\\\"Order Date\\\"\")"
    assert period_expression("Order Date", "yymmdd", "bigquery") == '"FLOOR(`Order Date` / 100)"'


def test_plausible_types_count_what_a_skeleton_can_make():
    from dptool.generate.instantiate import plausible_types

    cardinality = {CITY: 40, STATE: 27, STATUS: 2, METHOD: 4, ORDERED_AT: 540}
    # all seven; no rule: no counterfactual, 40 cities: no breakdown of every group; 2 statuses: no ranking;
    # a temporal dimension: point query, threshold and trend, no counterfactual without a rule
    assert [plausible_types(s, SHOP, cardinality) for s in SKELETONS] == [7, 5, 6, 3, 7]
    # the counts agree with what instantiate makes from these skeletons
    for s in SKELETONS:
        made = instantiate([s], SHOP, PROFILES, seed=42, dialect="duckdb")
        assert len(made) <= plausible_types(s, SHOP, cardinality), s.id
