"""MetricFlow parity compares like with like: "no row" and 0 are equal where MetricFlow's own semantics make them so.

A copy of the subscriptions fixture with two metrics added: invoices counted with `fill_nulls_with: 0` and
`join_to_timespine: true` (MetricFlow gives every month of the time spine a row, 0 where there is no invoice;
dptool has rows only for months with data), and refunded invoices counted under a filter (dptool keeps every
country and month, counting 0 where no invoice was refunded; MetricFlow has no row there). Generate says every
metric equal and prints no per-group warning. The one-warning-per-metric shape of a real difference is checked
without dbt below.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dptool.generate.parity import Parity, Slice, _absent_values, _compare
from tests.subscriptions import GENERATE_ARGS, cli, copy_fixture, set_up

ADDED = """
  - name: invoices_every_month
    label: Invoices Every Month
    type: simple
    type_params:
      measure: {name: invoice_rows, fill_nulls_with: 0, join_to_timespine: true}

  - name: refunded_invoices
    label: Refunded Invoices
    type: simple
    type_params:
      measure: invoice_rows
    filter: "{{ Dimension('invoice__invoice_status') }} = 'refunded'"
"""


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = copy_fixture(tmp_path_factory.mktemp("parity") / "project")
    metrics = root / "models" / "marts" / "_metrics.yml"
    metrics.write_text(metrics.read_text(encoding="utf-8").rstrip("\n") + "\n" + ADDED, encoding="utf-8")
    set_up(root)
    proc = cli("generate", "--project-dir", str(root), "--out", str(root / "bundle"), *GENERATE_ARGS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root, proc


def test_no_row_and_zero_are_equal_where_metricflow_says_so(generated):
    root, proc = generated
    assert "MetricFlow parity: 22 of 22 metrics equal" in proc.stdout, proc.stdout
    assert not [line for line in proc.stdout.splitlines() if "MetricFlow" in line and line.startswith("warning")]
    card = (Path(root) / "bundle" / "card.md").read_text(encoding="utf-8")
    assert "| invoices_every_month | overall, by month," in card and "| refunded_invoices | overall, by month," in card
    assert "differs" not in card.split("## MetricFlow parity")[1].split("\n## ")[0]


SEMANTIC = {
    "filled": {"name": "filled", "type": "simple", "filter": None,
               "type_params": {"measure": {"name": "rows", "fill_nulls_with": 0, "join_to_timespine": True}}},
    "filtered": {"name": "filtered", "type": "simple", "filter": {"where_filters": [{"where_sql_template": "x"}]},
                 "type_params": {"measure": {"name": "rows", "fill_nulls_with": None}}},
    "plain": {"name": "plain", "type": "simple", "filter": None, "type_params": {"measure": {"name": "rows"}}},
    "share": {"name": "share", "type": "ratio", "filter": None,
              "type_params": {"numerator": {"name": "filled"}, "denominator": {"name": "plain"}}},
}


def test_what_no_row_equals_follows_each_metrics_semantics():
    assert _absent_values(SEMANTIC, "plain") == (None,)
    assert _absent_values(SEMANTIC, "filled") == (None, 0)
    assert _absent_values(SEMANTIC, "filtered") == (None, 0)
    assert _absent_values(SEMANTIC, "share") == (None, 0)  # an input's fill


def test_a_real_difference_is_one_warning_per_metric_with_an_example():
    by_month = Slice("plain", "plain", "by month", "m", "metric_time__month")
    mine = (["period", "value"], [("2024-01", 5), ("2024-02", 7), ("2024-03", 0)])
    theirs = (["metric_time__month", "plain"], [("2024-01", 5), ("2024-02", 8), ("2024-04", 0)])
    # a plain metric: a month one side lacks is a difference, even at 0
    by_month.differences = _compare(mine, theirs, by_month, _absent_values(SEMANTIC, "plain"))
    assert by_month.differences == ["dptool 7, MetricFlow 8 for 2024-02", "dptool 0, MetricFlow has no row for 2024-03",
                                    "dptool has no row, MetricFlow 0 for 2024-04"]
    # a filled one: only the value that differs where both have a row
    assert _compare(mine, theirs, by_month, _absent_values(SEMANTIC, "filled")) == [
        "dptool 7, MetricFlow 8 for 2024-02"]
    overall = Slice("plain", "plain", "overall", None, None, ["dptool 12, MetricFlow 13"])
    parity = Parity(slices=[overall, by_month, Slice("filled", "filled", "overall", None, None)])
    assert parity.summary() == "MetricFlow parity: 1 of 2 metrics equal"
    assert parity.warnings() == ["warning: metric plain (plain): MetricFlow parity: 4 groups differ in overall, by "
                                 "month; e.g. overall: dptool 12, MetricFlow 13"]
