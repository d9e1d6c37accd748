"""Issue 23, item 5: a hedge or a contradiction at any depth of a structured answer is wrong, and right answers
that the scorer used to refuse (a capitalised field, a spelled date, a month written another way, a NULL group
named "NULL") are right."""

from __future__ import annotations

import pytest

from dptool.answers import compare

TOL = {"rel_tol": 0.001, "abs_tol": 0.005}


def task(kind: str, gold, base=None, **fmt) -> dict:
    return {"task_id": "t", "question": "", "answer_format": {"type": kind, **fmt}, "gold": gold, "base": base,
            "tolerance": TOL}


THRESHOLD = task("threshold", {"value": 2.524635, "threshold": 2.8, "result": "FAIL"},
                 {"value": 3.155793, "threshold": 2.8, "result": "PASS"}, comparison="exceeds")
VALUE = task("value", {"value": 13.462728}, {"value": 16.828411})
TREND = task("trend", {"direction": "decreasing", "total_change_pct": -22.48, "peak_period": "1993-01"},
             {"direction": "flat", "total_change_pct": -3.1, "peak_period": "1993-04"}, flat_band_pct=5.0)
COMPARISON = task("comparison", {"group_a": "Prague", "group_b": "south Moravia", "value_a": 2.869886,
                                 "value_b": 1.969586, "higher": "Prague"})
SIGNIFICANCE = task("significance", {"significant": False, "p_value": 0.0502, "test_name": "Welch's t-test"},
                    alpha=0.05)
GOLD_THRESHOLD = {"value": 2.524635, "result": "FAIL"}
GOLD_TREND = {"direction": "decreasing", "total_change_pct": -22.48, "peak_period": "1993-01"}
GOLD_COMPARISON = {"group_a": "Prague", "group_b": "south Moravia", "value_a": 2.869886, "value_b": 1.969586,
                   "higher": "Prague"}


def hedged(t: dict, answer) -> str:
    verdict = compare(t, answer)
    assert (verdict.correct, verdict.kind) == (False, "hedged answer"), (answer, verdict)
    return verdict.reason


@pytest.mark.parametrize(("t", "answer"), [
    (THRESHOLD, {**GOLD_THRESHOLD, "possible_results": ["PASS", "FAIL"]}),
    (THRESHOLD, {**GOLD_THRESHOLD, "details": {"result": "PASS"}}),
    (THRESHOLD, {**GOLD_THRESHOLD, "details": {"note": "PASS"}}),
    (THRESHOLD, {**GOLD_THRESHOLD, "details": {"checks": [{"passed": True}]}}),
    (THRESHOLD, {**GOLD_THRESHOLD, "without_policy": {"value": 3.155793, "result": "PASS"}}),
    (THRESHOLD, {"answer": GOLD_THRESHOLD, **GOLD_THRESHOLD, "base": {"value": 3.155793, "result": "PASS"}}),
    (THRESHOLD, {"value": 2.524635, "result": ["FAIL", "PASS"]}),
    (THRESHOLD, {"value": 2.524635, "result": "FAIL or PASS"}),
    (VALUE, {"value": 13.462728, "without_rules": {"value": 16.828411}}),
    (VALUE, {"value": 13.462728, "alternatives": [16.828411]}),
    (VALUE, {"value": 13.462728, "value_before_rules": 16.828411}),
    (TREND, {**GOLD_TREND, "alternatives": ["flat"]}),
    (TREND, {**GOLD_TREND, "details": {"direction": "flat"}}),
    (TREND, {**GOLD_TREND, "notes": [{"peak_period": "1993-04"}]}),
    (TREND, {**GOLD_TREND, "direction": "decreasing or flat"}),
    (COMPARISON, {**GOLD_COMPARISON, "details": {"higher": "south Moravia"}}),
    (COMPARISON, {**GOLD_COMPARISON, "details": {"if_base": "south Moravia"}}),
    (COMPARISON, {**GOLD_COMPARISON, "higher": "Prague or south Moravia"}),
    (SIGNIFICANCE, {"significant": False, "p_value": 0.0502, "details": {"significant_at_10pct": True}}),
    (SIGNIFICANCE, {"significant": False, "p_value": 0.0502, "possible_verdicts": [True, False]}),
    (task("ranking", [{"k": "a", "value": 2.0}, {"k": "b", "value": 1.0}], key="k", k=2),
     [{"k": "a", "value": 2.0, "alternatives": [1.5]}, {"k": "b", "value": 1.0}]),
    (task("breakdown", [{"k": "a", "value": 2.0}, {"k": "b", "value": 1.0}], key="k"),
     [{"k": "a", "value": 2.0, "value_without_rules": 2.5}, {"k": "b", "value": 1.0}]),
], ids=["possible-results", "verdict-in-details", "verdict-value-in-details", "boolean-deep-in-a-list",
        "base-answer-beside", "gold-and-base-nested", "verdict-list", "two-verdicts-in-one-string",
        "base-value-nested", "value-alternatives", "second-value-field", "trend-alternatives", "direction-in-details",
        "peak-in-a-list", "two-directions", "nested-higher", "group-named-in-details", "higher-names-both",
        "second-significance-nested", "possible-verdicts", "row-alternatives", "row-second-value"])
def test_a_hedge_at_any_depth_is_wrong(t, answer):
    hedged(t, answer)


def test_the_reason_says_where_the_second_claim_stands():
    assert hedged(THRESHOLD, {**GOLD_THRESHOLD, "possible_results": ["PASS", "FAIL"]}) == \
        "hedged answer: 'possible_results' offers alternatives"
    assert hedged(THRESHOLD, {**GOLD_THRESHOLD, "details": {"result": "PASS"}}) == \
        "hedged answer: a second 'result' in 'details'"
    assert hedged(TREND, {**GOLD_TREND, "alternatives": ["flat"]}) == \
        "hedged answer: 'alternatives' offers alternatives"
    assert hedged(COMPARISON, {**GOLD_COMPARISON, "details": {"higher": "south Moravia"}}) == \
        "hedged answer: a second 'higher' in 'details'"


def test_extra_detail_that_claims_nothing_again_is_fine():
    assert compare(THRESHOLD, {**GOLD_THRESHOLD, "threshold": 2.8, "details": {"numerator": 41, "denominator": 16.2,
                                                                                "unit": "ratio"}}).correct
    assert compare(VALUE, {"value": 13.462728, "unit": "ratio", "n": 42, "details": {"loans": 42}}).correct
    assert compare(TREND, {**GOLD_TREND, "monthly": [{"month": "1993-01", "amount": 3.2}]}).correct
    ranked = task("ranking", [{"k": "a", "value": 2.0}, {"k": "b", "value": 1.0}], key="k", k=2)
    assert compare(ranked, [{"rank": 1, "k": "a", "value": 2.0, "n": 12}, {"rank": 2, "k": "b", "value": 1.0}]).correct


def test_a_verdict_that_contradicts_its_own_p_value_is_wrong():
    verdict = compare(SIGNIFICANCE, {"significant": False, "p_value": 0.0442})
    assert (verdict.correct, verdict.kind) == (False, "contradictory answer")
    assert verdict.reason == "contradictory answer: p_value 0.0442 at alpha 0.05 means significant true, the " \
                             "answer says false"
    assert compare(SIGNIFICANCE, {"significant": False, "p_value": 0.0502}).correct
    assert compare(SIGNIFICANCE, {"significant": False, "p_value": "> 0.05"}).correct
    significant = task("significance", {"significant": True, "p_value": 0.0442}, alpha=0.05)
    assert compare(significant, {"significant": True, "p_value": "< 0.05"}).correct
    assert compare(significant, {"significant": True, "p_value": "p = 0.0442"}).correct
    assert compare(significant, {"significant": True, "p_value": 0.0512}).kind == "contradictory answer"


def test_field_names_are_read_without_case():
    threshold = task("threshold", {"value": 0.826531, "threshold": 0.8, "result": "PASS"})
    assert compare(threshold, {"Result": "PASS", "Value": 0.8265}).correct
    assert compare(threshold, {"RESULT": "pass", "value": 0.8265, "Threshold": 0.8}).correct
    assert compare(threshold, {"Result": "PASS"}).reason == "missing field 'value'"  # not "a second verdict"
    assert compare(threshold, {"result": "PASS", "Result": "FAIL", "value": 0.8265}).kind == "hedged answer"
    assert compare(SIGNIFICANCE, {"Significant": False, "P-Value": 0.0502}).correct
    assert compare(COMPARISON, {"Group_A": "Prague", "Group_B": "south Moravia", "Value_A": 2.869886,
                                "Value_B": 1.969586, "Higher": "Prague"}).correct
    assert compare(task("ranking", [{"k3": "a", "value": 2.0}], key="k3", k=1), [{"K3": "a", "Value": 2.0}]).correct


@pytest.mark.parametrize("written", [
    "the 1st of January 1995", "1st January 1995", "January the 1st, 1995", "January 1st, 1995",
    "the first of January 1995", "January first, 1995", "1-Jan-1995", "01-01-1995", "1995.01.01", "1 Jan. 1995"])
def test_a_spelled_date_is_the_date(written):
    t = task("knowledge", {"passage": "| Effective date | 1 January 1995 (version 2.0) |", "facts": ["1995-01-01"]},
             asks="effective_date")
    assert compare(t, f"The policy took effect on {written}.").correct, compare(t, f"Effective {written}.")
    assert not compare(t, f"The policy took effect on {written.replace('1995', '1996')}.").correct


@pytest.mark.parametrize("peak", ["01/1993", "1993 January", "January 1993", "Jan 1993", "Jan. 1993",
                                  "January, 1993", "1993-01", "1993/01", "1993-01-01T00:00:00Z", "1 January 1993",
                                  "1-1993", "Jan-1993"])
def test_a_peak_month_written_any_way(peak):
    assert compare(TREND, {**GOLD_TREND, "peak_period": peak}).correct, compare(TREND, {**GOLD_TREND,
                                                                                        "peak_period": peak})
    assert not compare(TREND, {**GOLD_TREND, "peak_period": peak.replace("1993", "1994")}).correct


def test_a_null_group_named_null():
    rows = [{"k": None, "value": 1.0}, {"k": "a", "value": 2.0}]
    ranking, breakdown = task("ranking", sorted(rows, key=lambda r: -r["value"]), key="k", k=2), \
        task("breakdown", rows, key="k")
    for name in ("NULL", "null", "None", "(null)"):
        assert compare(ranking, [{"k": "a", "value": 2}, {"k": name, "value": 1}]).correct, name
        assert compare(breakdown, {name: 1, "a": 2}).correct, name
        assert compare(breakdown, [[name, 1], ["a", 2]]).correct, name
        assert not compare(breakdown, {name: 2, "a": 1}).correct, name
    assert compare(breakdown, [{"k": None, "value": 1}, {"k": "a", "value": 2}]).correct
    assert compare(breakdown, {"NULL": 1, "null": 1, "a": 2}).reason == "group NULL appears 2 times"
    both = task("breakdown", [{"k": None, "value": 1.0}, {"k": "none", "value": 2.0}], key="k")
    assert compare(both, {"null": 1, "none": 2}).correct  # "none" is the group of that name, "null" the NULL one
    assert not compare(both, {"none": 1, "null": 2}).correct


# ---- held-out round four (issue 23's "done when") --------------------------------------------------------------

@pytest.mark.parametrize(("t", "answer"), [
    (THRESHOLD, {**GOLD_THRESHOLD, "meta": {"scenarios": [{"name": "base", "outcome": "PASS"}]}}),
    (THRESHOLD, {**GOLD_THRESHOLD, "notes": "would be PASS if refunds were counted"}),
    (THRESHOLD, {**GOLD_THRESHOLD, "extra": [[["PASS"]]]}),
    (THRESHOLD, {**GOLD_THRESHOLD, "sensitivity": {"value": 3.155793}}),
    (THRESHOLD, {**GOLD_THRESHOLD, "value_2": 3.155793}),
    (THRESHOLD, {**GOLD_THRESHOLD, "other_value": 3.155793}),
    (THRESHOLD, {**GOLD_THRESHOLD, "scenario_b": {"value": 3.155793, "result": "PASS"}}),
    (THRESHOLD, {"value": [2.524635, 3.155793], "result": "FAIL"}),
    (THRESHOLD, {"value": "2.524635 or 3.155793", "result": "FAIL"}),
    (VALUE, {"value": 13.462728, "meta": {"Value": 16.828411}}),
    (VALUE, {"value": "13.462728 (16.828411 unadjusted)"}),
    (TREND, {**GOLD_TREND, "peak_period": "1993-01 (or 1993-04)"}),
    (TREND, {**GOLD_TREND, "total_change_pct": "-22.48 or -3.1"}),
    (TREND, {**GOLD_TREND, "total_change_pct_2": -3.1}),
    (COMPARISON, {**GOLD_COMPARISON, "note": "south Moravia is higher before the policy"}),
    (COMPARISON, {**GOLD_COMPARISON, "ranking": ["south Moravia", "Prague"]}),
    (COMPARISON, {**GOLD_COMPARISON, "value_a_adjusted": 2.1}),
    (SIGNIFICANCE, {"significant": False, "p_value": 0.0502, "note": "significant at the 10% level"}),
    (SIGNIFICANCE, {"significant": False, "p_value": [0.0502, 0.03]}),
], ids=["scenario-outcome-deep", "verdict-in-a-note", "verdict-deep-in-lists", "value-in-sensitivity", "value-2",
        "other-value", "second-scenario", "value-list", "value-or", "value-capitalised-deep", "unadjusted-in-brackets",
        "peak-or", "change-or", "change-2", "other-group-higher-in-a-note", "groups-ranked-in-a-list",
        "adjusted-value", "significant-at-another-level", "p-value-list"])
def test_round_four_hedges_at_any_depth_are_wrong(t, answer):
    hedged(t, answer)


@pytest.mark.parametrize(("t", "answer"), [
    (THRESHOLD, {"result": "FAILED", "value": 2.524635}), (THRESHOLD, {"result": "fails", "value": 2.524635}),
    (THRESHOLD, {"result": "does not pass", "value": 2.524635}), (THRESHOLD, {"result": "FAIL.", "value": 2.524635}),
    (THRESHOLD, {"result": "**FAIL**", "value": 2.524635}), (THRESHOLD, {"result": "\u2717 FAIL", "value": 2.524635}),
    (THRESHOLD, {"result": "FAIL", "value": 2.524635, "threshold_value": 2.8}),
    (TREND, {**GOLD_TREND, "direction": "downward trend"}), (TREND, {**GOLD_TREND, "peak_period": "1993M01"}),
    (TREND, {**GOLD_TREND, "peak_period": "199301"}), (TREND, {**GOLD_TREND, "total_change_pct": "\u221222.48%"}),
    (COMPARISON, {**GOLD_COMPARISON, "higher": "group_a"}), (COMPARISON, {**GOLD_COMPARISON, "higher": "A"}),
    (COMPARISON, {**GOLD_COMPARISON, "note": "Prague is higher than south Moravia"}),
    (SIGNIFICANCE, {"is_significant": False, "p_value": 0.0502}),
], ids=["failed", "fails", "does-not-pass", "with-a-full-stop", "bold", "with-a-cross", "threshold-value-restated",
        "downward-trend", "sdmx-month", "yyyymm", "minus-sign-percent", "higher-group-a", "higher-a",
        "a-note-that-agrees", "is-significant"])
def test_round_four_right_answers_written_another_way_are_right(t, answer):
    verdict = compare(t, answer)
    assert verdict.correct, (answer, verdict.reason)


def test_round_four_a_verdict_said_another_way_still_has_to_be_the_gold_one():
    assert compare(THRESHOLD, {"result": "PASSED", "value": 2.524635}).kind == "wrong verdict"
    assert compare(THRESHOLD, {"result": "does not fail", "value": 2.524635}).kind == "wrong verdict"
    assert compare(TREND, {**GOLD_TREND, "direction": "upward trend"}).kind == "wrong verdict"
    assert compare(TREND, {**GOLD_TREND, "peak_period": "199304"}).kind == "wrong verdict"
    assert compare(COMPARISON, {**GOLD_COMPARISON, "higher": "group_b"}).kind == "wrong verdict"


def test_round_four_a_breakdown_of_one_group_may_be_a_mapping():
    one = task("breakdown", [{"order_status": "delivered", "value": 0.038337}], key="order_status", format="percent")
    assert compare(one, {"delivered": 0.038337}).correct  # was "expected a JSON array of rows, got an object"
    assert compare(one, {"Delivered": "3.8337%"}).correct
    assert not compare(one, {"delivered": 0.05}).correct
    assert not compare(one, {"canceled": 0.038337}).correct
    assert not compare(one, {"value": 0.038337}).correct  # which group is not said
