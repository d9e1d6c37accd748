"""Probes: where a skeleton's rules change its metric, and how instantiation draws windows and slices from it."""

from __future__ import annotations

from copy import deepcopy
from dataclasses import replace
from datetime import date
from decimal import Decimal
from pathlib import Path

from dptool.generate.instantiate import _months, gold_value_is_avg, instantiate
from dptool.generate.probe import ALL, Probe, _cells, probe_sql
from tests.test_instantiate import ORDERED_AT, PROFILES, SHOP, SKELETONS, STATE

COLUMNS = ["variant", "period", "state", "value"]


def test_cells_keep_changed_and_present_cells():
    rows = [("base", date(2017, 3, 1), "SP", 10.0), ("gold", date(2017, 3, 1), "SP", 12.0),
            ("base", date(2017, 3, 1), "RJ", 5.0), ("gold", date(2017, 3, 1), "RJ", 5.0 + 1e-12),
            ("base", date(2017, 4, 1), "MG", 7.0), ("gold", date(2017, 4, 1), "MG", None),  # suppressed
            ("base", date(2017, 5, 1), "DF", None), ("gold", date(2017, 5, 1), "DF", None)]
    probe = _cells(COLUMNS, rows, temporal_dimension=False)
    assert probe.by_month == {(2017, 3): {"SP"}, (2017, 4): {"MG"}}
    assert probe.rows_by_month == {(2017, 3): {"SP", "RJ"}, (2017, 4): {"MG"}}


def test_a_row_only_one_variant_has_is_a_change():
    # a rule that excludes rows can remove a whole group: the gold side has no row at all
    rows = [("base", date(2017, 3, 1), "SP", 10.0)]
    assert _cells(COLUMNS, rows, temporal_dimension=False).by_month == {(2017, 3): {"SP"}}


def test_yymmdd_periods_and_temporal_dimensions():
    # Berka: the month of 970315 is floor(970315 / 100) = 9703; PostgreSQL returns it as a Decimal
    rows = [("base", Decimal("9703"), 1.0), ("gold", Decimal("9703"), 2.0),
            ("base", 9704.0, 1.0), ("gold", 9704.0, 1.0)]
    probe = _cells(["variant", "period", "value"], rows, temporal_dimension=True)
    assert probe.by_month == {(1997, 3): {ALL}}
    assert probe.changed({(1997, 3)}, ["any slice"]) and not probe.changed({(1997, 4)})


def test_changed_reads_months_and_values():
    probe = Probe(by_month={(2017, 3): {"SP"}, (2017, 9): {"RJ"}})
    assert probe.changed() and probe.changed({(2017, 3)}) and probe.changed({(2017, 3)}, ["SP", "MG"])
    assert not probe.changed({(2017, 3)}, ["RJ"]) and not probe.changed({(2018, 1)})
    assert not probe.changed(None, [])
    assert Probe(by_month={None: {"SP"}}).changed({(2030, 1)}, ["SP"])  # a metric without time: any window


def test_probe_model_groups_by_the_dimension_and_the_month():
    sql = probe_sql(SKELETONS[0], SHOP, PROFILES, "duckdb")
    assert "dptool.gold(metric=\"avg_order_value\", rules=[\"capital_override\"], group_by=[\"state\"]" in sql
    assert "shape='series', period=dbt.date_trunc('month', \"ordered_at\")" in sql
    assert "materialized='view'" in sql and "tags=['dptool_probe']" in sql


def test_instantiate_draws_windows_and_slices_where_the_rule_changes_the_answer():
    skeleton = SKELETONS[0]  # avg_order_value by state, with a rule
    probe = Probe(by_month={(2017, 5): {"RJ"}}, rows_by_month={(2017, 5): {"RJ", "SP", "MG"}})
    out = instantiate([skeleton], SHOP, PROFILES, seed=42, dialect="duckdb", probes={skeleton.id: probe})
    assert out, "the probe found a change: there are candidates"
    for c in out:
        assert c.window is None or (2017, 5) in _months(c.window), (c.analysis_type, c.window)
        if "state" in c.slice:
            assert c.slice["state"] == "RJ", c.analysis_type
        if "groups" in c.slice:
            assert "RJ" in c.slice["groups"], c.analysis_type


def test_a_rule_that_changes_nothing_makes_no_candidate():
    skeleton = SKELETONS[0]
    out = instantiate([skeleton], SHOP, PROFILES, seed=42, dialect="duckdb", probes={skeleton.id: Probe()})
    assert out == []
    # without a probe (it did not compile, or the skeleton has no rules) instantiation is as before
    assert instantiate([skeleton], SHOP, PROFILES, seed=42, dialect="duckdb")


def test_frequent_values_of_a_small_lookup_table_stand_for_many_rows():
    # a 4-row lookup (DF holds 1 of 4) under a metric whose largest table holds 1,000 rows: DF is a slice
    catalog, skeletons = deepcopy(SHOP), [replace(SKELETONS[0], rules=())]  # no rule names a state
    profiles = {**PROFILES, STATE: type(PROFILES[STATE])(4, (("SP", 1), ("RJ", 1), ("MG", 1), ("DF", 1)))}
    assert not [c for c in instantiate(skeletons, catalog, profiles, 42, "duckdb") if "state" in c.slice]
    catalog.dimension_weight = {ORDERED_AT: 1000}
    sliced = [c for c in instantiate(skeletons, catalog, profiles, 42, "duckdb") if "state" in c.slice]
    assert sliced and all(c.slice["state"] in {"SP", "RJ", "MG", "DF"} for c in sliced)


FIXTURES = Path(__file__).parent / "fixtures"


def test_the_probe_sees_whether_the_rules_leave_an_avg():
    """npl_ratio is avg(...); npl_denominator rewrites it into a ratio of sums, crisis_adjustment_1997 does not.
    The compiled SQL of each probe (dbt compiled these from the demo) says which."""
    rewritten = (FIXTURES / "compiled_probe_npl_denominator.sql").read_text(encoding="utf-8")
    kept = (FIXTURES / "compiled_probe_npl_crisis.sql").read_text(encoding="utf-8")
    assert not gold_value_is_avg(rewritten, "duckdb")
    assert gold_value_is_avg(kept, "duckdb")
    assert not gold_value_is_avg("select 1 as value", "duckdb")  # no dptool_gold CTE
    # not in dptool.gold's layout: the whole query is read
    one_line = "with dptool_base as (select 1 as value), dptool_gold as (select {} as value from t) select 1"
    assert gold_value_is_avg(one_line.format("avg(x)"), "duckdb")
    assert not gold_value_is_avg(one_line.format("sum(x) / count(x)"), "duckdb")
    assert not gold_value_is_avg(kept.replace("avg(", "sum("), "duckdb")  # no avg at all: not parsed


def test_significance_is_decided_on_the_value_after_the_rules():
    # avg_order_value is avg(amount): without a probe, a significance test is made; a probe that saw the rules
    # rewrite the value away from avg() (a ratio of sums has no per-row variance) makes none, before dbt compiles
    skeleton = SKELETONS[0]
    cells = {(2017, m): {"DF", "SP", "RJ"} for m in range(1, 13)}  # the rule names DF

    def kinds(value_is_avg):
        probe = Probe(by_month=cells, rows_by_month=cells, value_is_avg=value_is_avg)
        return {c.analysis_type for c in instantiate([skeleton], SHOP, PROFILES, seed=42, dialect="duckdb",
                                                     probes={skeleton.id: probe})}

    assert "significance_testing" in kinds(True)
    assert "significance_testing" in kinds(None)  # not known: the metric's own value decides
    assert "significance_testing" not in kinds(False)
    assert "comparison" in kinds(False)
