"""Dimension profiles on a tiny DuckDB warehouse: distinct counts, frequent values, months and time encodings."""

from __future__ import annotations

import copy
import dataclasses
import json
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
import yaml

from dptool.errors import DptoolError
from dptool.generate.enrich import period_label
from dptool.generate.instantiate import window_predicates, windows
from dptool.generate.profile import (
    TOP_VALUES,
    DimensionProfile,
    data_span,
    plain,
    profile_dimensions,
    unmatched_conditions,
)
from dptool.project.catalog import load_catalog
from dptool.project.warehouse import Warehouse

FIXTURES = Path(__file__).parent / "fixtures"
SHOP = load_catalog(json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8")))
CITY, STATE = "model.shop.customers.city", "model.shop.customers.state"
STATUS, METHOD, ORDERED_AT = "model.shop.orders.status", "model.shop.payments.method", "model.shop.orders.ordered_at"

CUSTOMERS = [(1, "São Paulo", "SP"), (2, "São Paulo", "SP"), (3, "Rio de Janeiro", "RJ"), (4, "Campinas", "SP"),
             (5, None, "DF"), (6, "Brasília", "DF")]
PAYMENTS = [(1, "card", 10.0), (2, "card", 20.0), (3, "boleto", 5.0), (4, "card", 7.5), (5, "boleto", 1.0),
            (6, "voucher", 2.0), (7, None, 3.0)]
# two orders in each month from January to June 1997, one in July, one without a date
DAYS = [date(1997, m, d) for m in range(1, 7) for d in (1, 28)] + [date(1997, 7, 15), None]
STATUSES = ["paid", "paid", "not_paid"] * 4 + ["paid", "refunded"]


def yymmdd(d: date | None) -> int | None:
    return None if d is None else (d.year % 100) * 10000 + d.month * 100 + d.day


def insert(con, table: str, rows: list[tuple]) -> None:
    # one statement: executemany is slow in DuckDB
    marks = ", ".join("(" + ", ".join("?" * len(rows[0])) + ")" for _ in rows)
    con.execute(f"insert into {table} values {marks}", [v for row in rows for v in row])


def warehouse(tmp_path: Path, column_type: str, values: list, cities: list | None = None) -> Warehouse:
    """shop.duckdb with the shop's three tables; `ordered_at` of the type and values given."""
    path = tmp_path / "shop.duckdb"  # the file's name is the catalog's database name: "shop"."sales"."orders"
    con = duckdb.connect(str(path))
    try:
        con.execute("create schema sales")
        con.execute("create table sales.customers (customer_id integer, city varchar, state varchar)")
        insert(con, "sales.customers", cities or CUSTOMERS)
        con.execute(f"create table sales.orders (order_id integer, customer_id integer, status varchar, "
                    f"ordered_at {column_type})")
        insert(con, "sales.orders", [(i, i % 6 + 1, s, v) for i, (s, v) in enumerate(zip(STATUSES, values,
                                                                                        strict=True))])
        con.execute("create table sales.payments (order_id integer, method varchar, amount double)")
        insert(con, "sales.payments", PAYMENTS)
    finally:
        con.close()
    return Warehouse(path)


MONTHS_1997 = ((1997, 1, 2), (1997, 2, 2), (1997, 3, 2), (1997, 4, 2), (1997, 5, 2), (1997, 6, 2), (1997, 7, 1))


def test_profiles_of_a_timestamp_column(tmp_path):
    values = [None if d is None else datetime(d.year, d.month, d.day, 23, 59) for d in DAYS]
    with warehouse(tmp_path, "timestamp", values) as wh:
        profiles = profile_dimensions(SHOP, wh)
    assert profiles == {
        # NULLs are no value; ties in frequency go by value
        CITY: DimensionProfile(4, (("São Paulo", 2), ("Brasília", 1), ("Campinas", 1), ("Rio de Janeiro", 1))),
        STATE: DimensionProfile(3, (("SP", 3), ("DF", 2), ("RJ", 1))),
        ORDERED_AT: DimensionProfile(13, months=MONTHS_1997, encoding="timestamp"),
        STATUS: DimensionProfile(3, (("paid", 9), ("not_paid", 4), ("refunded", 1))),
        METHOD: DimensionProfile(3, (("card", 3), ("boleto", 2), ("voucher", 1))),
    }
    assert profiles[CITY].encoding == ""  # only a time column has an encoding


def test_profile_of_a_date_column(tmp_path):
    with warehouse(tmp_path, "date", DAYS) as wh:
        assert profile_dimensions(SHOP, wh)[ORDERED_AT] == DimensionProfile(13, months=MONTHS_1997,
                                                                             encoding="timestamp")


@pytest.mark.parametrize("column_type", ["integer", "bigint"])
def test_profile_of_a_yymmdd_column(tmp_path, column_type):
    # Berka's dates: 970101 is 1 January 1997; months come from FLOOR and MOD of the integer
    with warehouse(tmp_path, column_type, [yymmdd(d) for d in DAYS]) as wh:
        assert profile_dimensions(SHOP, wh)[ORDERED_AT] == DimensionProfile(13, months=MONTHS_1997,
                                                                             encoding="yymmdd")


def test_yymmdd_months_across_a_year(tmp_path):
    days = [date(1995, 12, 31), date(1996, 1, 1), date(1996, 1, 31), date(1999, 12, 1)] * 3 + [None, None]
    with warehouse(tmp_path, "integer", [yymmdd(d) for d in days]) as wh:
        assert profile_dimensions(SHOP, wh)[ORDERED_AT] == DimensionProfile(
            4, months=((1995, 12, 3), (1996, 1, 6), (1999, 12, 3)), encoding="yymmdd")


def test_time_column_without_values(tmp_path):
    with warehouse(tmp_path, "timestamp", [None] * len(DAYS)) as wh:
        assert profile_dimensions(SHOP, wh)[ORDERED_AT] == DimensionProfile(0, months=(), encoding="timestamp")


@pytest.mark.parametrize(("column_type", "value", "shown"), [
    ("varchar", "1997-01-01", "'1997-01-01'"),
    ("integer", 19970101, "19970101"),  # YYYYMMDD is no YYMMDD
    ("integer", -1, "-1"),
    ("double", 970101.0, "970101.0"),
])
def test_time_column_of_another_type(tmp_path, column_type, value, shown):
    with warehouse(tmp_path, column_type, [value] * len(DAYS)) as wh, pytest.raises(DptoolError) as info:
        profile_dimensions(SHOP, wh)
    assert str(info.value) == (f"orders.ordered_at: a temporal dimension must hold timestamps, dates or YYMMDD "
                               f"integers, not {shown}")


def test_top_values_are_capped(tmp_path):
    cities = [(i, f"City {i:02d}", "SP") for i in range(40)] + [(100 + i, "City 39", "SP") for i in range(3)]
    with warehouse(tmp_path, "date", DAYS, cities=cities) as wh:
        city = profile_dimensions(SHOP, wh)[CITY]
    assert TOP_VALUES == 25
    assert city.distinct == 40
    assert city.top_values == (("City 39", 4), *((f"City {i:02d}", 1) for i in range(24)))


# --- what the profile feeds: windows that hold their rows, periods that name their months ------------------------


@pytest.mark.parametrize(("column_type", "encoding"), [("timestamp", "timestamp"), ("integer", "yymmdd")])
def test_windows_select_their_rows(tmp_path, column_type, encoding):
    values = [yymmdd(d) for d in DAYS] if encoding == "yymmdd" else DAYS
    with warehouse(tmp_path, column_type, values) as wh:
        profile = profile_dimensions(SHOP, wh)[ORDERED_AT]
        found = windows(profile)
        assert [w.label for w in found] == ["Q1 1997", "Q2 1997", "the first half of 1997"]
        counts = {(y, m): n for y, m, n in profile.months}
        for w in found:
            predicates = window_predicates("ordered_at", w, profile.encoding, "duckdb")
            sql = f"select count(*) from shop.sales.orders where {' and '.join(predicates)}"
            expected = sum(n for (y, m), n in counts.items() if w.start <= date(y, m, 1) < w.end)
            assert wh.query(sql)[1] == [(expected,)], w.label


@pytest.mark.parametrize(("column_type", "encoding", "period"), [
    ("timestamp", "timestamp", "date_trunc('month', ordered_at)"),
    ("integer", "yymmdd", "FLOOR(ordered_at / 100)"),
])
def test_periods_name_the_profiled_months(tmp_path, column_type, encoding, period):
    # the gold model's period (dbt.date_trunc or the YYMMDD expression), labelled as an answer labels it
    values = [yymmdd(d) for d in DAYS] if encoding == "yymmdd" else DAYS
    with warehouse(tmp_path, column_type, values) as wh:
        profile = profile_dimensions(SHOP, wh)[ORDERED_AT]
        rows = wh.query(f"select {period} as p, count(*) from shop.sales.orders where ordered_at is not null "
                        "group by p order by p")[1]
    assert [(period_label(p, encoding), n) for p, n in rows] == [(f"{y}-{m:02d}", n) for y, m, n in profile.months]


# --- the span where every table has data; values as JSON and YAML hold them ---------------------------------------


def _berka_like():
    """A catalog like Berka's: trans (three weeks of 1993, the real sample) and account (1993-1997) both
    have a temporal `date`; district has none. The transaction metric reads all three."""
    from dptool.project.catalog import Catalog, Dimension, Metric, Table

    tables = {f"model.bank.{n}": Table(f"model.bank.{n}", n, "bank", f'"bank"."{n}"', "", {})
              for n in ("trans", "account", "district")}
    dims = [Dimension("model.bank.trans", "date", "temporal", "date"),
            Dimension("model.bank.account", "date", "temporal", "date"),
            Dimension("model.bank.district", "A3", "spatial", "region")]
    metric = Metric("transaction_count", "model.bank.transaction_count", "bank", "Transaction Count", "count(*)", "",
                    "number", "", "", "transactions", "", (), tuple(sorted(tables)), ("date", "A3"),
                    period="model.bank.trans.date")
    catalog = Catalog("bank", "", tables=tables, dimensions={d.id: d for d in dims},
                      metrics={metric.id: metric})
    profiles = {"model.bank.trans.date": DimensionProfile(21, months=((1993, 1, 80), (1993, 2, 20)),
                                                          encoding="yymmdd"),
                "model.bank.account.date": DimensionProfile(1500, months=tuple(
                    (y, m, 75) for y in range(1993, 1998) for m in range(1, 13)), encoding="yymmdd"),
                "model.bank.district.A3": DimensionProfile(8, (("Prague", 1),))}
    return catalog, metric, profiles


def test_data_span_is_where_every_table_has_data():
    catalog, metric, profiles = _berka_like()
    assert data_span(catalog, metric, profiles) == ((1993, 1), (1993, 2))
    # the account table's span alone would allow every quarter of 1993 to 1997: no window fits trans's weeks
    assert windows(profiles["model.bank.account.date"], data_span(catalog, metric, profiles)) == []
    assert len(windows(profiles["model.bank.account.date"])) == 5 * 7


def test_no_question_asks_about_1993_from_three_weeks_of_transactions():
    """Berka's real trans sample: a candidate on it reads the whole history, never "Q1 1993" or "1993"."""
    from dptool.generate.instantiate import instantiate
    from dptool.generate.sample import Skeleton

    catalog, metric, profiles = _berka_like()
    skeletons = [Skeleton(metric.id, "model.bank.district.A3", "spatial", (), metric.tables),
                 Skeleton(metric.id, "model.bank.trans.date", "temporal", (), metric.tables)]
    out = instantiate(skeletons, catalog, profiles, seed=42, dialect="duckdb")
    assert out and all(c.window is None and "window" not in c.slice for c in out)
    assert "trend_analysis" not in {c.analysis_type for c in out}  # no months to trend over


def test_data_span_without_dates():
    catalog, metric, profiles = _berka_like()
    for dim in ("model.bank.trans.date", "model.bank.account.date"):
        profiles[dim] = DimensionProfile(0, months=(), encoding="yymmdd")
    assert data_span(catalog, metric, profiles) is None


@pytest.mark.parametrize(("value", "expected"), [
    (Decimal("12.35"), 12.35),
    (Decimal("99.00"), 99),
    (Decimal("-0.10"), -0.1),
    (Decimal("12345678901234567.89"), "12345678901234567.89"),  # a float would change it
    (Decimal("NaN"), "NaN"),
    (date(2017, 3, 1), "2017-03-01"),
    (datetime(2017, 3, 1, 8, 30), "2017-03-01T08:30:00"),
    (True, True),
    (None, None),
    ("SP", "SP"),
    (7, 7),
])
def test_plain_values(value, expected):
    got = plain(value)
    assert got == expected and type(got) is type(expected)
    yaml.safe_dump({"v": got})  # what write_properties does with a slice


def test_plain_numpy_scalars():
    import numpy

    assert plain(numpy.int64(3)) == 3 and type(plain(numpy.int64(3))) is int
    assert plain(numpy.float64(0.5)) == 0.5 and type(plain(numpy.float64(0.5))) is float


def test_decimal_dimension_values_are_profiled_plain(tmp_path):
    """jaffle-shop's order_total_dim: a DECIMAL column as a dimension gives plain numbers to slices."""
    values = [None if d is None else datetime(d.year, d.month, d.day) for d in DAYS]
    path = tmp_path / "shop.duckdb"
    with warehouse(tmp_path, "timestamp", values):
        pass
    con = duckdb.connect(str(path))
    con.execute("alter table sales.orders alter status type decimal(10, 2) using "
                "case status when 'paid' then 12.35 when 'not_paid' then 99.00 else 0.10 end")
    con.close()
    with Warehouse(path) as wh:
        profile = profile_dimensions(SHOP, wh)[STATUS]
    assert profile.top_values == ((12.35, 9), (99, 4), (0.1, 1))
    yaml.safe_dump({"slice": dict(profile.top_values)})


def test_an_applies_when_value_no_row_holds_is_a_warning_naming_the_rule_file_and_value(demo_project, demo_catalog,
                                                                                         demo_manifest):
    """A typo in a conditional rule's value (issue 28: `Brooklynn` was accepted silently)."""
    with Warehouse.of(demo_project.connection()) as wh:
        assert unmatched_conditions(demo_catalog, wh, demo_manifest) == []  # every value of the demo's rules is there
        catalog = copy.deepcopy(demo_catalog)
        [rule_id] = [r for r, rule in catalog.rules.items() if rule.applies_when == {"customer_state": "SP"}]
        catalog.rules[rule_id] = dataclasses.replace(catalog.rules[rule_id], applies_when={"customer_state": "SPP"})
        lines = unmatched_conditions(catalog, wh, demo_manifest)
    assert len(lines) == 1
    assert lines[0].startswith(f"warning: macros/ecommerce/_ecommerce__rules.yml: macro.dptool_demo.rule__{rule_id}: "
                               "meta.dptool.rule.applies_when.customer_state: 'SPP' is in no row of ")
    assert "(it holds 'AC', " in lines[0] and lines[0].endswith("the rule's condition matches nothing: a typo?")
