"""The typed comparator on hand-made tasks: every answer format, and each known hole of public scorers closed."""

from __future__ import annotations

import json

import pytest

from dptool.answers import compare
from dptool.evaluate.score import Answers, load_answers, score

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
        "expected one number, found 3 in text 'In Q1 2018 it was 7.96 days, down from 8.97'"


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
    assert reason(RANKING, {"SP": 10, "RJ": 5, "MG": 1}) == "expected a JSON array of rows, got an object"


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
    (task("value", {"value": 1.0}), "{not json", "expected one number, found 0 in text '{not json'"),
    (task("value", {"value": 1.0}), [1, 2], "expected one value, got an array of 2"),
    (task("value", {"value": 1.0}), {"value": "abc"}, "value: expected one number, got 'abc'"),
    (task("value", {"value": 1.0}), {"value": True}, "value: expected a number, got true"),
    (task("value", {"value": 1.0}), "NaN", "value: nan is not a number"),
    (task("value", {"value": 1.0}), {"a": 1, "b": 2}, "missing field 'value'"),
    (task("value", {"value": 1.0}), "x" * 1_000_001, "answer larger than 1 MB"),
    (task("value", {"value": 1.0}), ["x" * 1_000_001], "answer larger than 1 MB"),
    (task("value", {"value": 1.0}), "[" * 100_000, "expected one number, found 0 in text '" + "[" * 60 + "…'"),
    (RANKING, {"state": "SP", "value": 10}, "expected a JSON array of rows, got an object"),
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
    assert report["overall"] == {"n": 3, "correct": 2, "accuracy": 0.6667, "answered": 2}
    assert report["by_analysis_type"] == {"ranking": {"n": 1, "correct": 0, "accuracy": 0.0},
                                          "value": {"n": 2, "correct": 2, "accuracy": 1.0}}
    assert list(report["by_tier"]) == ["knowledge+analytics", "knowledge+analytics+rule"]
    assert report["by_rule_type"] == {"(no rule)": {"n": 1, "correct": 1, "accuracy": 1.0},
                                      "exclusionary": {"n": 2, "correct": 1, "accuracy": 0.5},
                                      "override": {"n": 1, "correct": 0, "accuracy": 0.0}}
    assert report["by_domain"] == {"bank": {"n": 1, "correct": 1, "accuracy": 1.0},
                                   "shop": {"n": 2, "correct": 1, "accuracy": 0.5}}
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

    class Text(HTMLParser):
        """The text of the page's "Wrong answers" section, element by element."""

        def __init__(self):
            super().__init__()
            self.tags, self.texts, self.inside = [], [], False

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)

        def handle_data(self, data):
            self.inside = self.inside or data.startswith("Wrong answers")
            if self.inside and data.strip():
                self.texts.append(data)

    parsed = Text()
    parsed.feed(page)
    assert "script" not in parsed.tags  # the given answer is text, never markup
    section = "\n".join(parsed.texts[:parsed.texts.index("Tasks")])
    assert section.startswith("Wrong answers (2)")
    assert "Was <b>R&D</b>'s \"share\" over 1?" in section and "Which states lead?" in section
    assert '"value": "<script>alert(1)</script>"' in section and "no answer" in section
    assert '"state": "SP"' in section and "Is this one right?" not in section
