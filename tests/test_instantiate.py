"""Stage 4: candidates from skeletons — analysis types, windows, slice values and k."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from dptool.catalog import load_catalog
from dptool.instantiate import MIN_GROUP_ROWS, Window, instantiate, windows
from dptool.profile import DimensionProfile
from dptool.sample import Skeleton
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
    ORDERED_AT: DimensionProfile(540, months=months((2017, 1), (2018, 6))),
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
    assert [(c.task_id, c.skeleton.id, c.analysis_type) for c in out] == [
        ("t_0001", "avg_order_value__state__capital_override", "point_query"),
        ("t_0002", "avg_order_value__state__capital_override", "ranking"),
        ("t_0003", "avg_order_value__state__capital_override", "threshold_crossing"),
        ("t_0004", "avg_order_value__city", "point_query"),
        ("t_0005", "avg_order_value__city", "ranking"),
        ("t_0006", "avg_order_value__city", "threshold_crossing"),
        # status has 2 values: no ranking
        ("t_0007", "paid_rate__status__paid_definition", "point_query"),
        ("t_0008", "paid_rate__status__paid_definition", "threshold_crossing"),
        ("t_0009", "paid_rate__ordered_at", "point_query"),
        ("t_0010", "paid_rate__ordered_at", "threshold_crossing"),
        ("t_0011", "avg_order_value__method__exclude_tests", "point_query"),
        ("t_0012", "avg_order_value__method__exclude_tests", "ranking"),
        ("t_0013", "avg_order_value__method__exclude_tests", "threshold_crossing"),
    ]


def test_deterministic_for_a_seed():
    first = instantiate(SKELETONS, SHOP, PROFILES, seed=42, dialect="duckdb")
    again = instantiate(SKELETONS, SHOP, PROFILES, seed=42, dialect="duckdb")
    assert first == again


def test_another_seed_draws_other_values():
    first = instantiate(SKELETONS, SHOP, PROFILES, seed=42, dialect="duckdb")
    other = instantiate(SKELETONS, SHOP, PROFILES, seed=7, dialect="duckdb")
    assert [c.slice for c in first] != [c.slice for c in other]
    assert [(c.task_id, c.analysis_type) for c in first] == [(c.task_id, c.analysis_type) for c in other]


def test_rule_applies_when_forces_slice_value():
    # DF has 12 rows, under the 40 a drawn slice value needs; capital_override applies when state = DF
    for seed in (1, 42, 99):
        out = instantiate(SKELETONS[:1], SHOP, PROFILES, seed=seed, dialect="duckdb")
        values = [c for c in out if c.analysis_type != "ranking"]
        assert [c.slice["state"] for c in values] == ["DF", "DF"]
        assert [c.where[-1] for c in values] == ["state = 'DF'", "state = 'DF'"]


def test_ranking_candidate():
    (c,) = [c for c in instantiate(SKELETONS[:1], SHOP, PROFILES, seed=42, dialect="duckdb") if c.shape == "ranking"]
    assert (c.analysis_type, c.group_by, c.k, c.min_rows) == ("ranking", ["state"], 5, MIN_GROUP_ROWS)
    assert MIN_GROUP_ROWS == 30
    assert c.slice["min_group_rows"] == 30
    # rankings read a half or a year, never a quarter
    assert (c.window.end - c.window.start).days > 100
    assert c.where == in_window("ordered_at", c.window.start, c.window.end, "duckdb")
    assert c.slice["window"] == {"start": c.window.start.isoformat(), "end": c.window.end.isoformat(),
                                 "label": c.window.label}


@pytest.mark.parametrize(("distinct", "k"), [(27, 5), (7, 5), (6, 3), (3, 3), (2, None), (1, None)])
def test_ranking_k(distinct, k):
    profiles = {**PROFILES, STATE: replace(PROFILES[STATE], distinct=distinct)}
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
    profiles = {**PROFILES, STATUS: DimensionProfile(2, (("paid", 39), ("not_paid", 1)))}
    assert instantiate(SKELETONS[2:3], SHOP, profiles, seed=42, dialect="duckdb") == []


def test_temporal_dimension_gets_only_a_window():
    out = instantiate(SKELETONS[3:4], SHOP, PROFILES, seed=42, dialect="duckdb")
    assert [c.analysis_type for c in out] == ["point_query", "threshold_crossing"]
    for c in out:
        assert set(c.slice) == {"window"}
        assert c.where == in_window("ordered_at", c.window.start, c.window.end, "duckdb")
        assert (c.group_by, c.shape, c.k, c.min_rows) == ([], "value", None, None)


def test_no_window_without_months():
    profiles = {**PROFILES, ORDERED_AT: DimensionProfile(0)}
    out = instantiate(SKELETONS[2:3], SHOP, profiles, seed=42, dialect="duckdb")
    assert [(c.window, c.slice, c.where) for c in out] == [
        (None, {"status": "paid"}, ["status = 'paid'"]),
        (None, {"status": "not_paid"}, ["status = 'not_paid'"]),
    ]
