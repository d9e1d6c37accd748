"""The typed comparator on hand-made tasks: every answer format, and each known hole of public scorers closed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dptool.answers import Verdict, compare, missing_fact
from dptool.evaluate.score import Answers, load_answers, score
from tests.conftest import run_cli

TOL = {"rel_tol": 0.001, "abs_tol": 0.005}


def task(kind: str, gold, *, tol=TOL, base=None, **fmt) -> dict:
    return {"task_id": "t_0001", "analysis_type": kind, "tier": "knowledge+analytics+rule", "domain": "shop",
            "rule_types": ["exclusionary"], "answer_format": {"type": kind, **fmt}, "gold": gold, "base": base,
            "tolerance": tol}


def ok(t: dict, answer) -> bool:
    return compare(t, answer).correct


def reason(t: dict, answer) -> str:
    verdict = compare(t, answer)
    assert not verdict.correct, f"{answer!r} was accepted"
    assert verdict.reason and "\n" not in verdict.reason
    return verdict.reason


STATES = [{"state": "SP", "value": 10.0}, {"state": "RJ", "value": 5.0}, {"state": "MG", "value": 1.0}]
RANKING = task("ranking", STATES, key="state", k=3)
BREAKDOWN = task("breakdown", STATES, key="state")


# ---- value ---------------------------------------------------------------------------------------------------


def test_value_accepts_an_object_a_bare_number_and_a_text_with_one_number():
    t = task("value", {"value": 7.958333})
    for answer in ({"value": 7.958333}, 7.96, "7.958", '{"value": 7.9583}', "The average was 7.96 days.",
                   "<answer>{\"value\": 7.958}</answer>", "```json\n{\"value\": 7.958}\n```", {"avg_days": 7.96}):
        assert ok(t, answer), answer


def test_value_outside_the_tolerance_is_wrong_with_the_numbers_in_the_reason():
    t = task("value", {"value": 7.958333})
    assert reason(t, {"value": 8.97}) == "value: 8.97 is not 7.958333 (tolerance ±0.00796)"


def test_value_in_text_with_several_numbers_is_ambiguous():
    t = task("value", {"value": 7.958333})
    assert reason(t, "In Q1 2018 it was 7.96 days, down from 8.97") == \
        "expected one number, found more than one number in text 'In Q1 2018 it was 7.96 days, down from 8.97'"


# ---- numbers: tolerance, signs, NULL, percent --------------------------------------------------------------------


def test_elt_bench_one_percent_rule_breaking_on_negatives_is_closed():
    # ELT-Bench accepts when 0.99·gold <= answer <= 1.01·gold: an empty interval for a negative gold
    gold, answer = -52.3, -52.31
    assert not (0.99 * gold <= answer <= 1.01 * gold)
    t = task("value", {"value": gold})
    assert ok(t, answer) and ok(t, gold)
    assert reason(t, -53.0) == "value: -53 is not -52.3 (tolerance ±0.0523)"


def test_elt_bench_one_percent_rule_breaking_on_zero_is_closed():
    # a purely relative tolerance of a zero gold accepts only exact zero: abs_tol keeps a floor
    t = task("value", {"value": 0.0})
    assert ok(t, 0.0) and ok(t, 0.004) and ok(t, -0.004)
    assert reason(t, 0.3) == "value: 0.3 is not 0 (tolerance ±0.005)"


def test_a_lost_minus_sign_is_wrong():
    t = task("value", {"value": -12.5})
    assert reason(t, {"value": 12.5}) == "value: 12.5 is not -12.5 (tolerance ±0.0125)"
    assert reason(task("ranking", [{"state": "SP", "value": -3.0}], key="state", k=1), [{"state": "SP", "value": 3}]) \
        == "row 1 (SP): 3 is not -3 (tolerance ±0.005)"


def test_percent_scaling_accepts_the_fraction_and_the_percent_form_only_when_the_format_says_percent():
    share = task("value", {"value": 0.844444}, tol={"rel_tol": 0.001, "abs_tol": 0.0005}, format="percent")
    for answer in (0.8444, 84.44, "84.44%", "84.4 %", {"value": "84.44%"}):
        assert ok(share, answer), answer
    assert reason(share, "0.8444%") == "value: 0.8444% is not 0.844444 (tolerance ±0.000844)"
    assert reason(share, 0.008444).startswith("value: 0.008444 is not 0.844444")
    number = task("value", {"value": 0.844444}, format="number")
    assert reason(number, 84.44) == "value: 84.44 is not 0.844444 (tolerance ±0.005)"


def test_null_is_its_own_value():
    null = task("value", {"value": None})
    assert ok(null, {"value": None}) and ok(null, '{"value": null}')
    assert reason(null, {"value": 0}) == "value: 0 is not NULL"
    assert reason(task("value", {"value": 0.0}), {"value": None}) == "value: NULL is not 0"
    grouped = task("breakdown", [{"city": None, "value": 1.0}, {"city": "none", "value": 2.0}], key="city")
    assert ok(grouped, [{"city": "none", "value": 2}, {"city": None, "value": 1}])
    assert reason(grouped, [{"city": "none", "value": 1}, {"city": None, "value": 2}]) == \
        "group NULL: 2 is not 1 (tolerance ±0.005)"


# ---- rows: BIRD and Spider2-dbt holes ---------------------------------------------------------------------------


def test_bird_set_equality_hiding_duplicates_is_closed():
    answer = [["SP", 10.0], ["SP", 10.0], ["RJ", 5.0], ["MG", 1.0]]
    gold = [tuple(r.values()) for r in STATES]
    assert set(map(tuple, answer)) == set(gold)  # BIRD: set(pred) == set(gold) says correct
    assert reason(RANKING, answer) == "expected 3 rows, got 4"
    assert reason(BREAKDOWN, answer) == "group SP appears 2 times"
    assert reason(BREAKDOWN, '{"SP": 10, "SP": 10, "RJ": 5, "MG": 1}') == \
        "malformed answer: duplicate key 'SP' in a JSON object"


def test_bird_set_equality_hiding_order_by_errors_is_closed():
    answer = [{"state": "MG", "value": 1.0}, {"state": "RJ", "value": 5.0}, {"state": "SP", "value": 10.0}]
    assert {tuple(r.values()) for r in answer} == {tuple(r.values()) for r in STATES}
    assert reason(RANKING, answer) == "row 1: expected SP, got MG"
    assert ok(BREAKDOWN, answer)  # a breakdown is a set: its order is free
    assert ok(BREAKDOWN, {"MG": 1, "SP": 10, "RJ": 5})
    assert ok(RANKING, {"SP": 10, "RJ": 5, "MG": 1})  # an object keeps its order as written
    assert reason(RANKING, {"MG": 1, "SP": 10, "RJ": 5}) == "row 1: expected SP, got MG"


def test_spider2_dbt_per_column_sorting_accepting_scrambled_rows_is_closed():
    answer = [{"state": "SP", "value": 1.0}, {"state": "RJ", "value": 10.0}, {"state": "MG", "value": 5.0}]
    for column in ("state", "value"):  # Spider2-dbt sorts each column on its own: every column matches
        assert sorted(r[column] for r in answer) == sorted(r[column] for r in STATES)
    assert reason(RANKING, answer) == "row 1 (SP): 1 is not 10 (tolerance ±0.01)"
    assert reason(BREAKDOWN, answer) == "group SP: 1 is not 10 (tolerance ±0.01)"


def test_rows_may_come_in_several_shapes_and_keys_match_without_case_or_accents():
    t = task("ranking", [{"city": "sao paulo", "value": 3.0}, {"city": "rio de janeiro", "value": 2.0}],
             key="city", k=2)
    for answer in ([{"city": "São Paulo", "value": 3}, {"city": "Rio de  Janeiro", "value": 2}],
                   [{"sao paulo": 3}, {"rio de janeiro": 2}], [["sao paulo", 3], ["rio de janeiro", 2]],
                   {"ranking": [{"city": "sao paulo", "value": 3}, {"city": "rio de janeiro", "value": 2}]},
                   [{"customer_city": "sao paulo", "value": 3}, {"customer_city": "rio de janeiro", "value": 2}],
                   [{"rank": 1, "city": "sao paulo", "value": 3}, {"rank": 2, "city": "rio de janeiro", "value": 2}],
                   "Here you go: [[\"sao paulo\", 3], [\"rio de janeiro\", 2]]"):
        assert ok(t, answer), answer


def test_keys_stay_exact_when_folding_would_merge_two_gold_groups():
    t = task("breakdown", [{"k": "A", "value": 1.0}, {"k": "a", "value": 2.0}], key="k")
    assert ok(t, [{"k": "a", "value": 2}, {"k": "A", "value": 1}])
    assert reason(t, [{"k": "a", "value": 1}, {"k": "A", "value": 2}]) == "group A: 2 is not 1 (tolerance ±0.005)"


def test_breakdown_needs_every_group_and_no_other():
    assert reason(BREAKDOWN, [{"state": "SP", "value": 10}, {"state": "RJ", "value": 5}]) == "missing groups: MG"
    assert reason(BREAKDOWN, [*STATES, {"state": "BA", "value": 0}]) == "unexpected groups: BA"


# ---- threshold, trend, comparison, significance ------------------------------------------------------------------


def test_threshold_needs_the_verdict_and_the_value():
    t = task("threshold", {"value": 0.826531, "threshold": 0.8, "result": "PASS"}, format="percent",
             tol={"rel_tol": 0.001, "abs_tol": 0.0005})
    assert ok(t, {"value": 82.65, "result": "pass"}) and ok(t, {"value": 0.8265, "result": "PASS", "threshold": 80})
    assert reason(t, {"value": 0.8265, "result": "FAIL"}) == "result FAIL, the gold is PASS"
    assert reason(t, {"value": 0.79, "result": "PASS"}).startswith("value: 0.79 is not 0.826531")
    assert reason(t, {"value": 0.8265, "result": "PASS", "threshold": 0.9}).startswith("threshold: 0.9 is not 0.8")
    assert reason(t, {"value": 0.8265}) == "missing field 'result'"
    assert reason(t, {"value": 0.8265, "result": "maybe"}) == "result: expected PASS or FAIL, got 'maybe'"


def test_trend_needs_direction_change_and_peak_month():
    t = task("trend", {"direction": "increasing", "total_change_pct": 32.1, "peak_period": "2018-01"})
    assert ok(t, {"direction": "Increasing", "total_change_pct": 32.1, "peak_period": "Jan 2018"})
    assert ok(t, {"direction": "increasing", "total_change_pct": 0.321, "peak_period": "2018-01-31"})
    assert ok(t, {"direction": "increasing", "total_change_pct": "32.1%", "peak_period": "January 2018"})
    assert reason(t, {"direction": "decreasing", "total_change_pct": 32.1, "peak_period": "2018-01"}) == \
        "direction decreasing, the gold is increasing"
    assert reason(t, {"direction": "increasing", "total_change_pct": -32.1, "peak_period": "2018-01"}) == \
        "total_change_pct: -32.1 is not 32.1 (tolerance ±0.0321)"
    assert reason(t, {"direction": "increasing", "total_change_pct": 32.1, "peak_period": "2018-02"}) == \
        "peak_period '2018-02', the gold is 2018-01"


def test_comparison_aligns_values_by_group_not_by_position():
    t = task("comparison", {"group_a": "PR", "group_b": "AL", "value_a": 10.7, "value_b": 28.52, "higher": "AL"})
    assert ok(t, {"group_a": "AL", "group_b": "PR", "value_a": 28.52, "value_b": 10.7, "higher": "al"})
    assert reason(t, {"group_a": "AL", "group_b": "PR", "value_a": 10.7, "value_b": 28.52, "higher": "AL"}) == \
        "value of PR: 28.52 is not 10.7 (tolerance ±0.0107)"
    assert reason(t, {"group_a": "PR", "group_b": "AL", "value_a": 10.7, "value_b": 28.52, "higher": "PR"}) == \
        "higher PR, the gold is AL"
    assert reason(t, {"group_a": "PR", "group_b": "SP", "value_a": 10.7, "value_b": 28.52, "higher": "AL"}) == \
        "missing group AL"


def test_significance_needs_the_verdict_and_p_within_001():
    t = task("significance", {"significant": True, "p_value": 0.012, "test_name": "Welch's t-test (two-tailed)"})
    assert ok(t, {"significant": True, "p_value": 0.02, "test_name": "t-test"}) and \
        ok(t, {"significant": "yes", "p_value": 0.004})
    assert reason(t, {"significant": False, "p_value": 0.012}) == "significant false, the gold is true"
    assert reason(t, {"significant": True, "p_value": 0.03}) == "p_value: 0.03 is not 0.012 (tolerance ±0.01)"


# ---- knowledge ---------------------------------------------------------------------------------------------------


KNOWLEDGE = task("knowledge", {"passage": "Delivery duration exceeding sixty (60) calendar days is excluded as a "
                                          "data anomaly, effective 1 January 2017.",
                               "facts": ["60 calendar days", "excluded", "effective 1 January 2017"]})


def test_knowledge_answer_must_hold_every_key_fact_numbers_and_dates_in_any_form():
    for answer in ("Deliveries over sixty (60) calendar days are excluded since 2017-01-01 (effective date).",
                   "A 60-calendar-day cutoff: longer deliveries are excluded, effective January 1, 2017.",
                   {"answer": "excluded when above sixty calendar days; effective 01/01/2017"},
                   "Deliveries over 60 calendar days are excluded [1], effective 1 January 2017."):
        assert ok(KNOWLEDGE, answer), answer


def test_knowledge_answer_missing_a_fact_or_with_another_number_is_wrong():
    assert reason(KNOWLEDGE, "Deliveries over 61 calendar days are excluded, effective 1 January 2017.") == \
        "missing key fact '60 calendar days' ('60' not found)"
    assert reason(KNOWLEDGE, "Deliveries over 60 calendar days are excluded, effective 1 February 2017.") == \
        "missing key fact 'effective 1 January 2017' ('2017-01-01' not found)"
    assert reason(KNOWLEDGE, "Over 60 calendar days, effective 2017-01-01.") == \
        "missing key fact 'excluded' ('excluded' not found)"


# ---- malformed answers -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("t", "answer", "expected"), [
    (task("value", {"value": 1.0}), "{not json", "expected one number, found no number in text '{not json'"),
    (task("value", {"value": 1.0}), [1, 2], "expected one value, got an array of 2"),
    (task("value", {"value": 1.0}), {"value": "abc"}, "value: expected one number, got 'abc'"),
    (task("value", {"value": 1.0}), {"value": True}, "value: expected a number, got true"),
    (task("value", {"value": 1.0}), "NaN", "value: nan is not a number"),
    (task("value", {"value": 1.0}), {"a": 1, "b": 2}, "missing field 'value'"),
    (task("value", {"value": 1.0}), "x" * 1_000_001, "answer larger than 1 MB"),
    (task("value", {"value": 1.0}), ["x" * 1_000_001], "answer larger than 1 MB"),
    (task("value", {"value": 1.0}), "[" * 100_000, "expected one number, found no number in text '" + "[" * 60 + "…'"),
    (RANKING, {"state": "SP", "value": 10}, "expected 3 rows, got 1"),
    (RANKING, [{"state": "SP", "avg": 10, "n": 5}] * 3,
     "row 1: expected {'state': group, 'value': number}, got '{\"avg\": 10, \"n\": 5, \"state\": \"SP\"}'"),
    (RANKING, [[["SP"], 10]] * 3, "row 1: the group is not a value: '[\"SP\"]'"),
    (task("threshold", {"value": 1.0, "threshold": 0.5, "result": "PASS"}), "PASS", "expected a JSON object for a "
     "threshold answer, got text 'PASS'"),
    (task("nonsense", {"value": 1.0}), 1, "unknown answer format 'nonsense'"),
    (task("value", {"value": 1.0}), "   ", "no answer"),
    (task("value", {"value": 1.0}), None, "no answer"),
], ids=["not-json", "array-for-value", "word-for-number", "boolean", "nan", "no-value-field", "huge-text",
        "huge-json", "deep-nesting", "object-for-rows", "three-field-rows", "array-as-group", "verdict-as-text",
        "unknown-format", "blank", "none"])
def test_malformed_answers_score_zero_with_a_reason(t, answer, expected):
    assert reason(t, answer) == expected


# ---- aggregation -------------------------------------------------------------------------------------------------


def test_score_counts_missing_answers_as_wrong_and_groups_by_type_tier_rule_type_and_domain():
    tasks = [
        {**task("value", {"value": 1.0}, base={"value": 2.0}), "task_id": "a", "rule_types": ["exclusionary"]},
        {**task("value", {"value": 3.0}, base={"value": 3.0}), "task_id": "b", "tier": "knowledge+analytics",
         "rule_types": [], "domain": "bank"},
        {**RANKING, "task_id": "c", "rule_types": ["override", "exclusionary"]},
    ]
    report = score(tasks, Answers({"a": 1.0, "b": 3.0, "zz": 1}, []))
    # Wilson 95 % intervals: 2 of 3 gives 20.8-93.9 %, 1 of 1 20.7-100 %, 0 of 1 0-79.3 %, 1 of 2 9.5-90.5 %
    assert report["overall"] == {"n": 3, "correct": 2, "accuracy": 0.6667, "ci95": [0.2077, 0.9385], "answered": 2,
                                 "coverage": 0.6667, "accuracy_answered": 1.0}
    one, none, half = [0.2065, 1.0], [0.0, 0.7935], [0.0945, 0.9055]
    assert report["by_analysis_type"] == {"ranking": {"n": 1, "correct": 0, "accuracy": 0.0, "ci95": none},
                                          "value": {"n": 2, "correct": 2, "accuracy": 1.0, "ci95": [0.3424, 1.0]}}
    assert list(report["by_tier"]) == ["knowledge+analytics", "knowledge+analytics+rule"]
    assert report["by_rule_type"] == {"(no rule)": {"n": 1, "correct": 1, "accuracy": 1.0, "ci95": one},
                                      "exclusionary": {"n": 2, "correct": 1, "accuracy": 0.5, "ci95": half},
                                      "override": {"n": 1, "correct": 0, "accuracy": 0.0, "ci95": none}}
    assert report["by_domain"] == {"bank": {"n": 1, "correct": 1, "accuracy": 1.0, "ci95": one},
                                   "shop": {"n": 2, "correct": 1, "accuracy": 0.5, "ci95": half}}
    assert [r["reason"] for r in report["results"]] == ["", "", "no answer"]
    assert report["answers_file"]["unknown_task_ids"] == ["zz"]
    against_base = score(tasks, Answers({"a": 2.0, "b": 3.0}, []), against="base")
    assert against_base["overall"]["correct"] == 2 and against_base["against"] == "base"


def test_answers_file_problems_are_reported_not_raised(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join([json.dumps({"task_id": "a", "answer": 1}), "not json", json.dumps({"answer": 2}),
                               json.dumps({"task_id": "a", "answer": "2"}), '{"task_id": "b", "answer": {"value"']),
                    encoding="utf-8")
    answers = load_answers(path)
    assert answers.by_task == {"a": "2"}
    assert answers.problems == ["line 2: not JSON", "line 3: no task_id",
                                "line 4: a second answer for a (the last one counts)", "line 5: not JSON"]


def test_each_wrong_answer_is_summed_up_by_its_kind():
    threshold = task("threshold", {"value": 1.0, "threshold": 0.5, "result": "PASS"})
    cases = [(task("value", {"value": 1.0}), None, "no answer"), (RANKING, "PASS", "malformed answer"),
             (task("value", {"value": 1.0}), 2, "wrong value"), (threshold, {"value": 1, "result": "FAIL"},
                                                                  "wrong verdict"),
             (RANKING, list(reversed(STATES)), "wrong rows"), (KNOWLEDGE, "nothing", "missing key fact")]
    assert [compare(t, a).kind for t, a, _ in cases] == [kind for _, _, kind in cases]
    report = score([{**t, "task_id": str(i)} for i, (t, _, _) in enumerate(cases)],
                   Answers({str(i): a for i, (_, a, _) in enumerate(cases)}, []))
    assert report["reasons"] == {kind: 1 for _, _, kind in cases}


# ---- issue 16: no hedge passes -----------------------------------------------------------------------------------

SIGNIFICANCE = task("significance", {"significant": False, "p_value": 0.2374, "test_name": "Welch's t-test"})
THRESHOLD = task("threshold", {"value": 3.756383, "threshold": 4.2, "result": "FAIL"})
TREND = task("trend", {"direction": "decreasing", "total_change_pct": -22.48, "peak_period": "1993-11"})
COMPARISON = task("comparison", {"group_a": "PR", "group_b": "AL", "value_a": 10.7, "value_b": 28.52, "higher": "AL"})


def scored_lines(tmp_path, t: dict, *lines: str) -> dict:
    """The score of answers-file lines, as written (json.loads would already have dropped a repeated key)."""
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return score([t], load_answers(path))


@pytest.mark.parametrize(("t", "answer", "key"), [
    (task("value", {"value": 7.191687}), '{"value": 8.989608, "value": 7.191687}', "value"),
    (THRESHOLD, '{"value": 3.756383, "result": "PASS", "result": "FAIL"}', "result"),
    (SIGNIFICANCE, '{"significant": true, "significant": false, "p_value": 0.2374}', "significant"),
    (BREAKDOWN, '[{"state": "SP", "value": 1, "value": 10}, {"state": "RJ", "value": 5}, {"state": "MG", "value": 1}]',
     "value"),
], ids=["value", "result", "significant", "breakdown-row"])
def test_a_key_twice_in_an_answers_file_object_is_malformed_not_last_wins(tmp_path, t, answer, key):
    report = scored_lines(tmp_path, t, f'{{"task_id": "t_0001", "answer": {answer}}}')
    assert [(r["correct"], r["reason"]) for r in report["results"]] == \
        [(False, f"malformed answer: duplicate key {key!r} in a JSON object")]


def test_the_answer_key_twice_in_a_record_is_malformed(tmp_path):
    t = task("value", {"value": 7.191687})
    report = scored_lines(tmp_path, t, '{"task_id": "t_0001", "answer": 8.989608, "answer": 7.191687}')
    assert report["results"][0]["reason"] == "malformed answer: the key 'answer' twice in its record"
    assert report["answers_file"]["problems"] == ["line 1: the key 'answer' twice (the answer is malformed)"]


def test_a_second_verdict_field_is_a_hedge():
    assert ok(THRESHOLD, {"value": 3.756383, "result": "FAIL", "threshold": 4.2, "unit": "days"})
    assert reason(THRESHOLD, {"result": "FAIL", "verdict": "PASS", "value": 3.756383}) == \
        "hedged answer: both 'result' and 'verdict' state the verdict"
    assert reason(THRESHOLD, {"result": "FAIL", "status": "FAIL", "value": 3.756383}) == \
        "hedged answer: a second verdict in 'status'"
    assert reason(THRESHOLD, {"result": "FAIL", "otherwise": "pass", "value": 3.756383}) == \
        "hedged answer: 'otherwise' holds a second verdict, 'pass'"
    assert reason(SIGNIFICANCE, {"significant": False, "is_significant": True, "p_value": 0.2374}) == \
        "hedged answer: both 'significant' and 'is_significant' state the verdict"
    assert reason(TREND, {"direction": "decreasing", "trend": "increasing", "total_change_pct": -22.48,
                          "peak_period": "1993-11"}) == "hedged answer: a second verdict in 'trend'"
    assert compare(THRESHOLD, {"result": "FAIL", "verdict": "PASS", "value": 3.756383}).kind == "hedged answer"


def test_two_periods_in_one_field_are_a_hedge():
    answer = {"direction": "decreasing", "total_change_pct": -22.48}
    assert ok(TREND, {**answer, "peak_period": "1993-11"}) and ok(TREND, {**answer, "peak_period": "Nov 1993"})
    assert ok(TREND, {**answer, "peak_period": "1993-11-01 00:00:00"})
    assert reason(TREND, {**answer, "peak_period": "1993-11 or 1993-12"}) == \
        "hedged answer: peak_period names more than one month, '1993-11 or 1993-12'"
    assert reason(TREND, {**answer, "peak_period": "November 1993 / December 1993"}).startswith(
        "hedged answer: peak_period names more than one month")
    assert reason(TREND, {**answer, "peak_period": "1993-11 (maybe later)"}) == \
        "peak_period: expected a month such as 2018-01, got '1993-11 (maybe later)'"


def test_two_groups_where_one_is_asked_are_a_hedge():
    answer = {"group_a": "PR", "group_b": "AL", "value_a": 10.7, "value_b": 28.52}
    assert ok(COMPARISON, {**answer, "higher": "AL", "difference": 17.82})
    assert reason(COMPARISON, {**answer, "higher": "AL", "winner": "PR"}) == \
        "hedged answer: a second verdict in 'winner'"
    assert reason(COMPARISON, {**answer, "higher": "AL", "or_maybe": "pr"}) == \
        "hedged answer: 'or_maybe' names a group, 'pr'"
    assert reason(COMPARISON, {**answer, "higher": ["AL", "PR"]}) == \
        "hedged answer: 'higher' is a list of 2 where one is asked"


def test_a_list_where_one_value_is_asked_is_a_hedge():
    value = task("value", {"value": 7.191687})
    assert compare(value, {"value": [7.191687, 8.989608]}) == Verdict(
        False, "value: expected one number, got a list of 2: '[7.191687, 8.989608]'", "hedged answer")
    assert compare(value, {"value": "7.191687 or 8.989608"}) == Verdict(
        False, "value: expected one number, got '7.191687 or 8.989608'", "hedged answer")
    two = {"direction": "decreasing", "total_change_pct": -22.48, "peak_period": ["1993-11", "1993-12"]}
    assert reason(TREND, two) == "hedged answer: peak_period is a list of 2 where one month is asked"


# ---- issue 16: knowledge answers are scored for precision --------------------------------------------------------

ONBOARDING = json.loads((Path(__file__).parent / "fixtures" / "knowledge_answers.json").read_text(encoding="utf-8"))


def fixture_task(entry: dict) -> dict:
    return {"task_id": entry["task_id"], "analysis_type": "knowledge_retrieval", "tier": "knowledge",
            "question": entry["question"], "answer_format": entry["answer_format"], "gold": entry["gold"],
            "tolerance": {"rel_tol": 0.0, "abs_tol": 0.0}}


def test_a_list_of_numbers_holding_the_facts_is_not_a_knowledge_answer():
    k_0001 = fixture_task(next(e for e in ONBOARDING if e["task_id"] == "k_0001"))
    listing = " ".join(str(i) for i in range(101)) + " 1995-01-01"
    assert missing_fact("30", listing) is None  # every key fact is in it
    assert reason(k_0001, listing) == \
        "hedged answer: 95 numbers or dates not in the governing passage (3, 4, 5, …), 7 from it"


def test_a_pasted_knowledge_base_is_not_a_knowledge_answer():
    docs = "\n\n".join(e["gold"]["passage"] for e in ONBOARDING) * 3
    for entry in ONBOARDING:
        assert compare(fixture_task(entry), docs).kind == "hedged answer", entry["task_id"]


@pytest.mark.parametrize("entry", ONBOARDING, ids=[e["task_id"] for e in ONBOARDING])
def test_a_focused_knowledge_answer_passes_and_its_hedged_inverted_and_bare_twins_do_not(entry):
    t = fixture_task(entry)
    assert ok(t, entry["gold"]["passage"])
    for answer in entry["correct"]:
        assert ok(t, answer), (answer, compare(t, answer).reason)
    for answer in entry["hedged"]:
        assert compare(t, answer).kind == "hedged answer", answer
    for answer in entry.get("inverted", []):  # every fact stated, the rule turned around
        assert compare(t, answer).kind == "contradictory answer", answer
    for answer in entry.get("bare", []):  # the facts without what they measure
        assert compare(t, answer).kind == "missing key fact", answer


# ---- issue 16: what an answers file may hold --------------------------------------------------------------------


def test_a_byte_order_mark_does_not_lose_the_first_answer(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"task_id": "a", "answer": 1}\n{"task_id": "b", "answer": 2}\n')
    answers = load_answers(path)
    assert answers.by_task == {"a": 1, "b": 2} and answers.problems == []


def test_an_integer_of_more_than_4300_digits_is_a_wrong_answer_not_a_crash(tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "tasks.jsonl").write_text(json.dumps(task("value", {"value": 1.0})) + "\n", encoding="utf-8")
    (tmp_path / "answers.jsonl").write_text('{"task_id": "t_0001", "answer": ' + "9" * 5000 + "}\n"
                                            '{"task_id": "t_0002", "answer": {"value": ' + "9" * 4200 + "}}\n",
                                            encoding="utf-8")
    proc = run_cli("score", str(bundle), str(tmp_path / "answers.jsonl"), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "score" / "score.json").read_text(encoding="utf-8"))
    assert report["results"][0]["reason"] == "value: inf is not a number"
    assert compare(task("value", {"value": 1.0}), {"value": int("9" * 4200)}).reason == "value: inf is not a number"


def test_unknown_task_ids_are_reported_on_the_terminal(tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "tasks.jsonl").write_text(json.dumps(task("value", {"value": 1.0})) + "\n", encoding="utf-8")
    (tmp_path / "answers.jsonl").write_text("".join(json.dumps({"task_id": i, "answer": 1}) + "\n"
                                                    for i in ("t_0001", "t_9999", "T_0001")), encoding="utf-8")
    proc = run_cli("score", str(bundle), str(tmp_path / "answers.jsonl"), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    assert "warning: answers file has 2 task ids not in the bundle, not scored: T_0001, t_9999\n" in proc.stderr


def test_report_html_shows_each_wrong_task_with_its_question_gold_and_given_answer():
    from html.parser import HTMLParser

    from dptool.evaluate.report import html

    tasks = [{**task("value", {"value": 1.5}), "task_id": "t_1", "question": "Was <b>R&D</b>'s \"share\" over 1?"},
             {**RANKING, "task_id": "t_2", "question": "Which states lead?"},
             {**task("value", {"value": 3.0}), "task_id": "t_3", "question": "Is this one right?"}]
    answers = Answers({"t_1": {"value": "<script>alert(1)</script>"}, "t_3": 3.0}, [])
    report = score(tasks, answers)
    assert [(r["question"], r["expected"], r["answer"]) for r in report["results"]][:2] == [
        (tasks[0]["question"], {"value": 1.5}, {"value": "<script>alert(1)</script>"}),
        ("Which states lead?", STATES, None)]
    page = html(report, "run")

    class Scripts(HTMLParser):
        """The page's script elements: their attributes and text."""

        def __init__(self):
            super().__init__()
            self.scripts, self.open = [], None

        def handle_starttag(self, tag, attrs):
            if tag == "script":
                self.open = {"attrs": dict(attrs), "text": ""}
                self.scripts.append(self.open)

        def handle_endtag(self, tag):
            self.open = None if tag == "script" else self.open

        def handle_data(self, data):
            if self.open is not None:
                self.open["text"] += data

    parsed = Scripts()
    parsed.feed(page)
    # two scripts, both the page's own: the wrong answers as JSON data, and what draws them (as text, never markup)
    assert [s["attrs"] for s in parsed.scripts] == [{"type": "application/json", "id": "wrong-data"}, {}]
    assert "<" not in parsed.scripts[0]["text"]  # an answer's "<script>" is JSON's \u003c, inside its string
    cards = json.loads(parsed.scripts[0]["text"])
    assert "Wrong answers (2)" in page and "Is this one right?" not in parsed.scripts[0]["text"]
    assert [(c["id"], c["question"], c["given"]) for c in cards] == [
        ("t_1", "Was <b>R&D</b>'s \"share\" over 1?", '{\n "value": "<script>alert(1)</script>"\n}'),
        ("t_2", "Which states lead?", "no answer")]
    assert '"state": "SP"' in cards[1]["expected"]


def test_no_answer_takes_more_than_linear_time():
    # issue 23: the code fence was cut by a regex that backtracked cubically (56 s on 5,000 spaces)
    import time

    hostile = ["```" + " " * 3_000 + "x", "```" + " " * 999_000 + "x", "```json" + "\n" * 999_000,
               "<answer>" * 124_000, "{" * 999_000, "-" * 999_000, "(" * 999_000, "1 January " * 99_000]
    for t in (task("value", {"value": 1.0}), THRESHOLD, TREND, RANKING, BREAKDOWN, KNOWLEDGE, SIGNIFICANCE,
              COMPARISON):
        for answer in hostile:
            started = time.perf_counter()
            assert not compare(t, answer).correct
            assert time.perf_counter() - started < 2.0, (t["answer_format"]["type"], answer[:12])
