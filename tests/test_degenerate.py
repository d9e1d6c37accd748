"""No degenerate task: groups of which only one can have a value by the metric's definition are refused, and for
every answer format a rule task one answer could score right against both its gold and its base is refused."""

from __future__ import annotations

import pytest

from dptool.answers import compare
from dptool.generate.overlap import FORMATS, one_answer_fits_both
from dptool.generate.support import degenerate
from dptool.generate.validate import CHECKS, identifiers, issues
from tests.support_shop import candidate, set_up, support_of

TOL = {"rel_tol": 0.001, "abs_tol": 0.005}


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    return set_up(tmp_path_factory.mktemp("support_shop") / "project")


def test_a_one_group_breakdown_is_refused(shop):
    """Average Delivery Days by order status: only delivered orders have a delivery time, so shipped and canceled
    have no row the value reads. By region every group has some: not degenerate."""
    project, catalog = shop
    found = support_of(project, catalog, [candidate("avg_delivery_days", "decomposition", "status", "t_status"),
                                          candidate("avg_delivery_days", "decomposition", "region", "t_region")])
    by_status = {g["group"]: g["rows"] for g in found["t_status"]["groups"]}
    assert by_status == {"canceled": 0, "delivered": 77, "shipped": 0}
    task = {"task_id": "t_status", "analysis_type": "decomposition", "metric_ids": ["avg_delivery_days"],
            "question": "How does our Average Delivery Days break down by order status?",
            "gold": [{"status": "canceled", "value": None}, {"status": "delivered", "value": 5.9},
                     {"status": "shipped", "value": None}],
            "answer_format": {"type": "breakdown", "key": "status"}, "support": found["t_status"]}
    assert degenerate(task) == "only 'delivered' of its 3 groups has rows the value reads"
    assert "degenerate_groups" in issues(task, catalog, identifiers(catalog)) and "degenerate_groups" in CHECKS
    assert degenerate({**task, "support": found["t_region"]}) is None


def test_a_rate_whose_other_groups_have_no_event_is_degenerate():
    """A comparison where one group has rows but no event (its rate is zero by definition) is degenerate too."""
    support = {"min_rows": 30, "min_entities": 10, "min_events": 10, "entity": ["order_id"], "removed": [],
               "groups": [{"group": "canceled", "rows": 40, "entities": 40, "events": 40},
                          {"group": "delivered", "rows": 77, "entities": 77, "events": 0}]}
    task = {"analysis_type": "comparison", "support": support}
    assert degenerate(task) == "only 'canceled' of its 2 groups has rows the value reads"
    assert degenerate({**task, "analysis_type": "point_query"}) is None
    support["groups"][1]["events"] = 12
    assert degenerate(task) is None
    # a breakdown whose metric's rows hold one group in all (Late Delivery Rate by order status: delivered only)
    one = {**support, "groups": [{"group": "delivered", "rows": 9700, "entities": 9700, "events": 779}]}
    assert degenerate({"analysis_type": "decomposition", "support": one}) == "'delivered' is its only group"


# (format, gold, base that one answer fits with the gold, base that none does)
CASES = [
    ("value", {"value": 100.0}, {"value": 100.2001}, {"value": 100.21}),
    ("threshold", {"value": 0.5, "threshold": 0.45, "result": "PASS"},
     {"value": 0.509, "threshold": 0.45, "result": "PASS"}, {"value": 0.44, "threshold": 0.45, "result": "FAIL"}),
    ("trend", {"direction": "increasing", "total_change_pct": 12.0, "peak_period": "2017-11"},
     {"direction": "increasing", "total_change_pct": 12.02, "peak_period": "2017-11"},
     {"direction": "increasing", "total_change_pct": 12.02, "peak_period": "2017-10"}),
    ("comparison", {"group_a": "SP", "group_b": "RJ", "value_a": 10.0, "value_b": 8.0, "higher": "SP"},
     {"group_a": "RJ", "group_b": "SP", "value_a": 8.01, "value_b": 10.01, "higher": "SP"},
     {"group_a": "SP", "group_b": "RJ", "value_a": 10.0, "value_b": 8.5, "higher": "SP"}),
    ("significance", {"significant": False, "p_value": 0.30, "test_name": "welch_t"},
     {"significant": False, "p_value": 0.315, "test_name": "welch_t"},
     {"significant": False, "p_value": 0.33, "test_name": "welch_t"}),
    ("ranking", [{"state": "SP", "value": 3.0}, {"state": "RJ", "value": 2.0}],
     [{"state": "SP", "value": 3.005}, {"state": "RJ", "value": 2.0}],
     [{"state": "RJ", "value": 3.0}, {"state": "SP", "value": 2.0}]),
    ("breakdown", [{"state": "SP", "value": 3.0}, {"state": "RJ", "value": 2.0}],
     [{"state": "RJ", "value": 2.004}, {"state": "SP", "value": 3.0}],
     [{"state": "RJ", "value": 2.2}, {"state": "SP", "value": 3.0}]),
    ("knowledge", {"passage": "Loans of status B defaulted.", "facts": ["status B"]},
     {"passage": "Loans of status B defaulted, and D.", "facts": ["status B"]},
     {"passage": "Loans of status D are in debt.", "facts": ["status D"]}),
]


def _task(kind: str, gold, base) -> dict:
    fmt = {"type": kind, **({"key": "state"} if kind in ("ranking", "breakdown") else {})}
    return {"task_id": "t_1", "analysis_type": "point_query", "gold": gold, "base": base, "answer_format": fmt,
            "tolerance": TOL, "rule_ids": ["r"], "question": "What was our figure under every policy in 2017?"}


def test_every_answer_format_has_its_check():
    assert sorted(FORMATS) == sorted(kind for kind, *_ in CASES)


@pytest.mark.parametrize(("kind", "gold", "near", "far"), CASES, ids=[c[0] for c in CASES])
def test_one_answer_within_both_tolerances_is_refused(kind, gold, near, far):
    assert one_answer_fits_both(_task(kind, gold, near)), kind
    assert not one_answer_fits_both(_task(kind, gold, far)), kind
    assert not one_answer_fits_both({**_task(kind, gold, far), "base": None})


def test_the_overlap_is_what_the_scorer_accepts():
    """Where one answer fits both, the scorer shows it: an answer between the two scores right against each."""
    value = _task("value", {"value": 100.0}, {"value": 100.2001})
    assert compare(value, {"value": 100.1}).correct and compare(value, {"value": 100.1}, against="base").correct
    significance = _task("significance", {"significant": False, "p_value": 0.30, "test_name": "welch_t"},
                         {"significant": False, "p_value": 0.315, "test_name": "welch_t"})
    middle = {"significant": False, "p_value": 0.307, "test_name": "welch_t"}
    assert compare(significance, middle).correct and compare(significance, middle, against="base").correct


@pytest.mark.parametrize("kind", ["value", "significance"])
def test_validation_refuses_the_overlap(shop, kind):
    """The two overlaps main let through: a base whose own window reaches the gold's, a p-value 0.015 away."""
    _, catalog = shop
    _, gold, near, far = next(c for c in CASES if c[0] == kind)
    banned = identifiers(catalog)
    assert "rule_without_effect" in issues(_task(kind, gold, near), catalog, banned)
    assert "rule_without_effect" not in issues(_task(kind, gold, far), catalog, banned)
