"""Misses named for what they are, and results by the team's own metrics and rules: on hand-made tasks of every
kind a bundle holds (a counterfactual whose base applies every rule, its rule-free answer beside it), through
`dptool score` and `dptool compare` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dptool.answers import compare
from dptool.evaluate.failures import (
    DEFINITIONS,
    RULES_NOT_APPLIED,
    TRUNCATED,
    WITHDRAWN_APPLIED,
    failure_class,
    right_without_rules,
)
from dptool.evaluate.score import Answers, score
from tests.conftest import run_cli

TOL = {"rel_tol": 0.001, "abs_tol": 0.005}
RULE_TIER = "knowledge+analytics+rule"


def value_task(task_id: str, gold: float, base: float, *, metric: str = "aov", rules=("refunds_excluded",),
               tier: str = RULE_TIER, **more) -> dict:
    return {"task_id": task_id, "analysis_type": "point_query", "tier": tier, "domain": "shop",
            "question": f"What is {metric}?", "answer_format": {"type": "value"}, "gold": {"value": gold},
            "base": {"value": base}, "tolerance": TOL, "metric_ids": [metric], "rule_ids": list(rules),
            "rule_types": ["exclusionary"] * len(rules), "rules_in_force": list(rules), **more}


def counterfactual(task_id: str, gold: float, base: float, rule_free: float | None, in_force=("vat_net",),
                   withdrawn: str = "refunds_excluded", metric: str = "aov") -> dict:
    """"Suppose `withdrawn` had never been adopted": the base applies every rule, the gold all but `withdrawn`."""
    task = value_task(task_id, gold, base, metric=metric, rules=sorted({withdrawn, *in_force}),
                      rules_in_force=list(in_force), withdrawn_rule=withdrawn, rule_scope="all")
    task["analysis_type"] = "counterfactual"
    if rule_free is not None:
        task["rule_free"] = {"value": rule_free}
    return task


# the counterfactual: gold 50 (VAT net only), base 40 (refunds excluded too), rule-free 60 (neither)
CF = counterfactual("cf_1", 50.0, 40.0, 60.0)
# a counterfactual whose withdrawn rule was the only one: the gold applies none, a rule-ignoring agent is right
CF_NONE_LEFT = counterfactual("cf_2", 70.0, 65.0, 70.0, in_force=())
# one with a rule left in force that changes nothing in its slice: again right without the rules
CF_UNTOUCHED = counterfactual("cf_3", 80.0, 75.0, 80.0, in_force=("vat_net",), metric="gmv")
POINT = value_task("pq_1", 42.0, 40.0)  # the base is the rule-free answer here
PLAIN = value_task("pq_2", 3.0, 3.0, metric="orders", rules=(), tier="knowledge+analytics")


def classed(task: dict, answer, against: str = "gold") -> str:
    return failure_class(task, answer, compare(task, answer, against=against), against)


def test_a_counterfactual_answered_with_every_rule_is_withdrawn_rule_still_applied():
    assert classed(CF, {"value": 40.0}) == WITHDRAWN_APPLIED
    assert classed(CF, {"value": 60.0}) == RULES_NOT_APPLIED
    assert classed(CF, {"value": 55.0}) == "wrong value"
    assert classed(CF, {"value": 50.0}) == ""


def test_rules_not_applied_needs_a_rule_free_answer_that_is_not_the_gold():
    # a point query's base is computed under no rule
    assert classed(POINT, {"value": 40.0}) == RULES_NOT_APPLIED
    # a counterfactual of an older bundle (no rule_free): the base still names the withdrawn rule, never "rules
    # not applied"
    old = {k: v for k, v in CF.items() if k != "rule_free"}
    assert classed(old, {"value": 40.0}) == WITHDRAWN_APPLIED and classed(old, {"value": 60.0}) == "wrong value"


def test_every_named_class_is_defined_in_one_line():
    for name in (RULES_NOT_APPLIED, WITHDRAWN_APPLIED, TRUNCATED, "no answer", "wrong value", "wrong rows"):
        assert DEFINITIONS[name] and "\n" not in DEFINITIONS[name]


def test_tasks_right_without_the_rules():
    assert right_without_rules(CF_NONE_LEFT) and right_without_rules(CF_UNTOUCHED) and right_without_rules(PLAIN)
    assert not right_without_rules(CF) and not right_without_rules(POINT)
    # an older bundle's counterfactual with no rule in force: its gold is computed under no rule
    assert right_without_rules({k: v for k, v in CF_NONE_LEFT.items() if k != "rule_free"})
    knowledge = {"task_id": "kn_1", "analysis_type": "knowledge_retrieval", "tier": "knowledge", "base": None,
                 "gold": {"passage": "x"}, "rule_ids": ["refunds_excluded"], "answer_format": {"type": "knowledge"}}
    assert not right_without_rules(knowledge)


def test_against_base_a_counterfactual_is_scored_against_its_rule_free_answer():
    # the no-rule condition hides the rules: a counterfactual's base (every rule) is no answer it could give
    report = score([CF, POINT], Answers({"cf_1": {"value": 60.0}, "pq_1": {"value": 40.0}}, []), against="base")
    assert report["overall"]["correct"] == 2
    assert report["results"][0]["expected"] == {"value": 60.0}
    wrong = score([CF], Answers({"cf_1": {"value": 40.0}}, []), against="base")["results"][0]
    assert (wrong["correct"], wrong["failure"]) == (False, "wrong value")
    # an older bundle's counterfactual with no rule in force is scored against its gold, and still no miss there
    # is named for a rule
    old = {k: v for k, v in CF_NONE_LEFT.items() if k != "rule_free"}
    wrong = score([old], Answers({"cf_2": {"value": 65.0}}, []), against="base")["results"][0]
    assert (wrong["correct"], wrong["failure"], wrong["expected"]) == (False, "wrong value", {"value": 70.0})


# ---- through the command line --------------------------------------------------------------------------------


TASKS = [CF, CF_NONE_LEFT, CF_UNTOUCHED, POINT, PLAIN]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def bundle(tmp_path) -> Path:
    folder = tmp_path / "bundle"
    folder.mkdir()
    write_jsonl(folder / "tasks.jsonl", TASKS)
    return folder


def answers_of(tmp_path: Path, name: str, key: str) -> Path:
    """Every task answered with its `key` answer (a counterfactual's rule_free, else the base where `key` is it)."""
    return write_jsonl(tmp_path / f"{name}.jsonl", [{"task_id": t["task_id"], "answer": t.get(key) or t["base"]}
                                                    for t in TASKS])


def scored(tmp_path: Path, bundle: Path, answers: Path, *args: str) -> tuple[dict, str, str]:
    out = tmp_path / f"score-{answers.stem}-{len(list(tmp_path.iterdir()))}"
    proc = run_cli("score", str(bundle), str(answers), "--out", str(out), *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "score.json").read_text(encoding="utf-8")), (out / "score.md").read_text(
        encoding="utf-8"), (out / "report.html").read_text(encoding="utf-8")


def test_score_names_the_misses_and_defines_each_class(tmp_path, bundle):
    # base answers: every rule on a counterfactual, none elsewhere
    report, md, page = scored(tmp_path, bundle, answers_of(tmp_path, "base", "base"))
    by_id = {r["task_id"]: r["failure"] for r in report["results"]}
    assert by_id == {"cf_1": WITHDRAWN_APPLIED, "cf_2": WITHDRAWN_APPLIED, "cf_3": WITHDRAWN_APPLIED,
                     "pq_1": RULES_NOT_APPLIED, "pq_2": ""}
    assert f"- **{WITHDRAWN_APPLIED}**: {DEFINITIONS[WITHDRAWN_APPLIED]}" in md
    assert f"- **{RULES_NOT_APPLIED}**: {DEFINITIONS[RULES_NOT_APPLIED]}" in md
    assert f"<dt>{WITHDRAWN_APPLIED}</dt><dd>{DEFINITIONS[WITHDRAWN_APPLIED]}</dd>" in page
    # rule-free answers: "rules not applied" where the rule-free answer is not the gold, right where it is
    report, md, _ = scored(tmp_path, bundle, answers_of(tmp_path, "rule-free", "rule_free"))
    by_id = {r["task_id"]: r["failure"] for r in report["results"]}
    assert by_id == {"cf_1": RULES_NOT_APPLIED, "cf_2": "", "cf_3": "", "pq_1": RULES_NOT_APPLIED, "pq_2": ""}
    assert report["right_without_rules"] == {"knowledge+analytics": 1, RULE_TIER: 2}
    assert "2 of 4 knowledge+analytics+rule tasks (50.0 %) are answered right by an answer that ignores every rule" \
        in md


def test_score_md_and_report_html_have_a_table_by_metric_and_by_rule(tmp_path, bundle):
    report, md, page = scored(tmp_path, bundle, answers_of(tmp_path, "base", "base"))
    assert report["by_metric"]["aov"] == {"n": 3, "correct": 0, "accuracy": 0.0, "ci95": [0.0, 0.5615],
                                          "dominant_failure": [WITHDRAWN_APPLIED, 2]}
    assert report["by_rule"]["refunds_excluded"]["dominant_failure"] == [WITHDRAWN_APPLIED, 3]
    assert report["by_rule"]["(no rule)"]["n"] == 1 and report["by_rule"]["(no rule)"]["dominant_failure"] is None
    assert "## By metric\n\n| | tasks | correct | accuracy | 95 % interval | dominant failure |" in md
    assert f"| aov | 3 | 0 | 0.0 % | 0.0–56.1 % | {WITHDRAWN_APPLIED} (2) |" in md
    assert f"| vat\\_net | 2 | 0 | 0.0 % | 0.0–65.8 % | {WITHDRAWN_APPLIED} (2) |" in md
    assert "<h2>By metric</h2>" in page and "<h2>By rule</h2>" in page and "<th>dominant failure</th>" in page


def test_score_selects_by_metric_and_by_rule(tmp_path, bundle):
    answers = answers_of(tmp_path, "base", "base")
    report, _, _ = scored(tmp_path, bundle, answers, "--metric", "gmv")
    assert [r["task_id"] for r in report["results"]] == ["cf_3"]
    report, _, _ = scored(tmp_path, bundle, answers, "--rule", "vat_net", "--metric", "aov,gmv")
    assert [r["task_id"] for r in report["results"]] == ["cf_1", "cf_3"]
    report, _, _ = scored(tmp_path, bundle, answers, "--rule", "refunds_excluded", "--type", "point_query")
    assert [r["task_id"] for r in report["results"]] == ["pq_1"]
    proc = run_cli("score", str(bundle), str(answers), "--out", str(tmp_path / "none"), "--metric", "revenue")
    assert proc.returncode == 1 and not (tmp_path / "none").exists()
    assert proc.stderr == ("error: --metric revenue: no metric of the bundle is called that; the bundle has: aov, gmv, "
                           "orders\n")
    proc = run_cli("score", str(bundle), str(answers), "--out", str(tmp_path / "none"), "--rule", "vat")
    assert proc.returncode == 1 and proc.stderr.startswith("error: --rule vat: no rule of the bundle is called that")


# ---- attempts ------------------------------------------------------------------------------------------------


def test_a_line_for_a_task_outside_the_selection_never_changes_the_attempt_count(tmp_path, bundle):
    gold = [{"task_id": t["task_id"], "answer": t["gold"]} for t in TASKS]
    answers = write_jsonl(tmp_path / "gold.jsonl", [*gold, {"task_id": "no_such_task", "attempt": 2, "answer": 1}])
    report, _, _ = scored(tmp_path, bundle, answers)
    assert report["epochs"] == 1 and report["overall"]["accuracy"] == 1.0
    assert report["answers_file"]["unknown_task_ids"] == ["no_such_task"]
    # nor does a second attempt of a task the selection leaves out
    answers = write_jsonl(tmp_path / "gold2.jsonl", [*gold, {"task_id": "cf_1", "attempt": 2, "answer": 1}])
    report, _, _ = scored(tmp_path, bundle, answers, "--metric", "orders")
    assert report["epochs"] == 1 and report["overall"]["accuracy"] == 1.0
    # and the tasks left out are in the bundle: no warning calls them unknown, nor their attempt beyond the run's;
    # they are said to be not selected
    assert report["answers_file"]["unknown_task_ids"] == []
    assert report["answers_file"]["problems"] == ["answers for 4 tasks of the bundle not selected, not scored: "
                                                  "cf_1, cf_2, cf_3, pq_1"]


def test_attempts_and_epochs_beyond_the_bound_are_refused(tmp_path, bundle):
    gold = [{"task_id": t["task_id"], "answer": t["gold"]} for t in TASKS]
    answers = write_jsonl(tmp_path / "many.jsonl", [*gold, {"task_id": "pq_2", "attempt": 10**9, "answer": 3}])
    report, _, _ = scored(tmp_path, bundle, answers)
    assert report["epochs"] == 1 and report["overall"]["accuracy"] == 1.0
    assert report["answers_file"]["problems"] == [
        "line 6: attempt 1000000000 is beyond the 100 attempts a run may hold (the line is not scored)"]
    run = tmp_path / "run"
    run.mkdir()
    write_jsonl(run / "answers.jsonl", gold)
    (run / "run.json").write_text(json.dumps({"epochs": 10**12}), encoding="utf-8")
    proc = run_cli("score", str(bundle), str(run), "--out", str(tmp_path / "out"))
    assert proc.returncode == 1 and not (tmp_path / "out").exists()
    assert proc.stderr == (f"error: {run / 'run.json'}: epochs is 1000000000000; expected a whole number from 1 to "
                           "100 (the attempts per task)\n")


# ---- compare scores each run as score does ---------------------------------------------------------------------


def run_folder(path: Path, answers: list[dict], **settings) -> Path:
    path.mkdir()
    write_jsonl(path / "answers.jsonl", answers)
    (path / "run.json").write_text(json.dumps({"epochs": 1, **settings}), encoding="utf-8")
    return path


def test_compare_scores_a_no_rule_run_as_score_does_and_shows_condition_and_completeness(tmp_path, bundle):
    rule_tasks = [t for t in TASKS if t["tier"] == RULE_TIER]
    # a no-rule run answers the rule tier with the rule-free answers: right, as scored against them
    no_rule = run_folder(tmp_path / "no-rule", [{"task_id": t["task_id"], "answer": t.get("rule_free") or t["base"]}
                                                for t in rule_tasks], condition="no-rule")
    broken = run_folder(tmp_path / "broken", [], condition="standard", complete=False)
    standard = run_folder(tmp_path / "standard", [{"task_id": t["task_id"], "answer": t["gold"]} for t in TASKS],
                          condition="standard")
    report, _, _ = scored(tmp_path, bundle, no_rule)
    assert (report["against"], report["overall"]["n"], report["overall"]["accuracy"]) == ("base", 4, 1.0)
    out = tmp_path / "compare"
    proc = run_cli("compare", str(no_rule), str(broken), str(standard), "--bundle", str(bundle), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    result = json.loads((out / "compare.json").read_text(encoding="utf-8"))
    board = {r["name"]: r for r in result["runs"]}
    assert board["no-rule"]["overall"] == report["overall"]
    assert (board["no-rule"]["condition"], board["no-rule"]["against"], board["no-rule"]["complete"]) == \
        ("no-rule", "base", True)
    assert (board["broken"]["condition"], board["broken"]["complete"]) == ("standard", False)
    assert board["standard"]["overall"]["n"] == 5 and not result["same_tasks"]
    rows = {line.split(" | ")[1]: line for line in proc.stdout.splitlines() if line.startswith("| ") and " | " in line
            and line.split(" | ")[0].lstrip("| ").isdigit()}
    assert rows["no-rule"].startswith("| 2 | no-rule | 100.0 % |")  # behind standard's 100 % of more tasks
    assert rows["no-rule"].endswith("| 4 | no-rule, against base | yes |")
    assert rows["broken"].endswith("| 5 | standard | no: marked incomplete |")
    assert "The runs were scored on different tasks" in proc.stdout
    md = (out / "compare.md").read_text(encoding="utf-8")
    assert "## By metric" in md and "## By rule" in md
    assert f"- **no answer**: {DEFINITIONS['no answer']}" in md
    # the flips are over the tasks both runs were scored on: the no-rule run never ran pq_2
    for flip in result["flips"]:
        assert "pq_2" not in {t["task_id"] for side in ("right_above_only", "right_below_only") for t in flip[side]} \
            or "no-rule" not in (flip["above"], flip["below"])


def test_compare_of_an_answers_file_shows_no_condition(tmp_path, bundle):
    answers = answers_of(tmp_path, "base", "base")
    out = tmp_path / "compare"
    proc = run_cli("compare", str(answers), "--bundle", str(bundle), "--out", str(out), "--rule", "vat_net")
    assert proc.returncode == 0, proc.stderr
    (run,) = json.loads((out / "compare.json").read_text(encoding="utf-8"))["runs"]
    assert (run["condition"], run["complete"], run["overall"]["n"]) == (None, None, 2)
    assert "selection: rule vat_net: 2 tasks" in proc.stdout
