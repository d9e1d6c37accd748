"""Runs repeated k times, reported as reliability (issue 25 items 3 and 5): attempts in answers files and run
folders, Wilson intervals over tasks, pass@1 and pass^k, the failure classes "rules not applied" and "truncated",
and the per-task seconds, tool calls, SQL errors and tokens; on hand-made run folders whose numbers are worked
out by hand below, and `dptool eval --epochs 2` against the loopback Ollama server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dptool.answers import compare
from dptool.bundle import fingerprint
from dptool.evaluate.failures import RULES_NOT_APPLIED, TRUNCATED, failure_class
from dptool.evaluate.intervals import pass_hat, wilson
from dptool.evaluate.score import Answers, load_run, score
from tests.conftest import run_cli

TOL = {"rel_tol": 0.001, "abs_tol": 1e-6}


def value_task(task_id: str, gold: float, base: float | None = None, tier: str = "knowledge+analytics") -> dict:
    return {"task_id": task_id, "analysis_type": "point_query", "tier": tier, "domain": "shop",
            "rule_types": ["exclusionary"] if base is not None else [], "question": f"What is {task_id}?",
            "answer_format": {"type": "value"}, "tolerance": TOL, "gold": {"value": gold},
            **({"base": {"value": base}} if base is not None else {})}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


TASKS = [value_task("t_a", 1.0), value_task("t_b", 2.0), value_task("t_c", 3.0, base=30.0, tier=
         "knowledge+analytics+rule"), value_task("t_d", 4.0)]


@pytest.fixture
def run(tmp_path) -> tuple[Path, Path]:
    """A bundle of four value tasks and a run folder of two epochs, as `dptool serve` would write it:

        t_a  attempt 1 right, attempt 2 right                      2 of 2
        t_b  attempt 1 right (its line has no "attempt"), 2 wrong  1 of 2
        t_c  attempt 1 gives the base answer, attempt 2 missing    0 of 2
        t_d  attempt 1 right, attempt 2 right                      2 of 2
    """
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    write_jsonl(bundle / "tasks.jsonl", TASKS)
    fp = fingerprint(bundle)
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"bundle": fp, "epochs": 2, "source": "serve", "selection": {}}),
                                     encoding="utf-8")
    write_jsonl(folder / "answers.jsonl", [
        {"task_id": "t_a", "attempt": 1, "bundle": fp, "answer": {"value": 1.0}, "seconds": 2.0, "tool_calls": 1,
         "sql_errors": 0, "prompt_tokens": 100, "completion_tokens": 10},
        {"task_id": "t_b", "bundle": fp, "answer": 2.0},
        {"task_id": "t_c", "attempt": 1, "bundle": fp, "answer": {"value": 30.0}},
        {"task_id": "t_d", "attempt": 1, "bundle": fp, "answer": 4},
        {"task_id": "t_a", "attempt": 2, "bundle": fp, "answer": {"value": 1.0005}, "seconds": 4.0, "tool_calls": 2,
         "sql_errors": 1, "prompt_tokens": 200, "completion_tokens": 20},
        {"task_id": "t_b", "attempt": 2, "bundle": fp, "answer": 5.0},
        {"task_id": "t_d", "attempt": 2, "bundle": fp, "answer": "It is 4."},
    ])
    return bundle, folder


def test_pass_at_1_and_pass_hat_k_of_a_hand_made_two_epoch_run(run):
    _, folder = run
    report = score(TASKS, load_run(folder))
    o = report["overall"]
    assert report["epochs"] == 2
    # pass@1 = right attempts / all attempts = (2 + 1 + 0 + 2) / (4 tasks × 2) = 5/8 = 0.625
    assert (o["n"], o["attempts"], o["correct"], o["accuracy"]) == (4, 8, 5, 0.625)
    # pass^2 = tasks right in both attempts / tasks = 2/4 (t_a, t_d)
    assert (o["all_correct"], o["pass_hat_k"]) == (2, 0.5)
    # Wilson over the 4 tasks, z = 1.96, z² = 3.8415: for p = 0.625, centre (0.625 + 3.8415/8) / (1 + 3.8415/4)
    # = 1.10518 / 1.96037 = 0.56376, half 1.96·sqrt(0.625·0.375/4 + 3.8415/64) / 1.96037 = 0.34434: 21.9-90.8 %;
    # for p = 0.5 the centre is 0.5 and the half 1.96·sqrt(0.0625 + 0.060023) / 1.96037 = 0.34996: 15.0-85.0 %
    assert o["ci95"] == [0.2194, 0.9081] and o["pass_hat_k_ci95"] == [0.15, 0.85]
    # coverage: 7 of the 8 attempts have an answer (t_c's second is missing); 5 of those 7 are right
    assert (o["answered"], o["coverage"], o["accuracy_answered"]) == (7, 0.875, 0.7143)
    assert report["by_tier"]["knowledge+analytics+rule"] == {
        "n": 1, "correct": 0, "accuracy": 0.0, "ci95": [0.0, 0.7935], "attempts": 2, "all_correct": 0,
        "pass_hat_k": 0.0, "pass_hat_k_ci95": [0.0, 0.7935]}
    by_task = {r["task_id"]: r for r in report["results"]}
    assert [(t, by_task[t]["right"], by_task[t]["correct"]) for t in by_task] == \
        [("t_a", 2, True), ("t_b", 1, False), ("t_c", 0, False), ("t_d", 2, True)]
    # a wrong attempt each: t_b's second a wrong value, t_c's first the base answer, t_c's second missing
    assert report["reasons"] == {"no answer": 1, RULES_NOT_APPLIED: 1, "wrong value": 1}
    assert [a["failure"] for a in by_task["t_c"]["attempts"]] == [RULES_NOT_APPLIED, "no answer"]
    # per task, the mean over its attempts of what they recorded; — (None) where nothing was
    t_a = by_task["t_a"]
    assert (t_a["seconds"], t_a["tool_calls"], t_a["sql_errors"], t_a["prompt_tokens"], t_a["completion_tokens"]) \
        == (3.0, 1.5, 0.5, 150.0, 15.0)
    assert by_task["t_b"]["seconds"] is None
    assert report["usage"] == {"seconds": 6.0, "tool_calls": 3, "sql_errors": 1, "prompt_tokens": 300,
                               "completion_tokens": 30, "attempts_recorded": 2}


def test_score_prints_pass_at_1_and_pass_hat_k_and_writes_them_in_every_report(run, tmp_path):
    bundle, folder = run
    proc = run_cli("score", str(bundle), str(folder), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:4] == [
        "accuracy (pass@1) 62.5 %: 5 of 8 attempts correct (4 tasks × 2 attempts), an attempt without an answer "
        "counting as wrong; scored against gold",
        "coverage 7 of 8 attempts answered (87.5 %); accuracy over the answered 71.4 % (5 of 7)",
        "95 % interval 21.9–90.8 % (Wilson score interval of the mean pass rate over 4 tasks)",
        "pass^2 50.0 %: 2 of 4 tasks right in every attempt; 95 % interval 15.0–85.0 %"]
    assert "why wrong: no answer 1 (33.3 %), rules not applied 1 (33.3 %), wrong value 1 (33.3 %)" in lines
    md = (tmp_path / "score" / "score.md").read_text(encoding="utf-8")
    assert "| point\\_query | 4 | 5 | 62.5 % | 21.9–90.8 % | 50.0 % | 15.0–85.0 % |" in md
    assert "| rules not applied | 1 | 33.3 % |" in md
    assert "| t\\_a | point\\_query | knowledge+analytics | 2/2 |  |  | 3 | 1.5 | 0.5 | 165 |" in md
    page = (tmp_path / "score" / "report.html").read_text(encoding="utf-8")
    assert "pass^2 <span class=big>50.0 %</span>" in page and "<td>rules not applied</td>" in page


def test_a_record_without_attempt_is_attempt_1_and_k_is_the_highest_attempt_without_run_json(tmp_path):
    path = write_jsonl(tmp_path / "answers.jsonl", [
        {"task_id": "t_a", "answer": 1.0}, {"task_id": "t_a", "attempt": 3, "answer": 1.0},
        {"task_id": "t_b", "attempt": 0, "answer": 2.0}, {"task_id": "t_b", "attempt": True, "answer": 2.0},
        {"task_id": "t_a", "attempt": 3, "answer": 9.0}])
    answers = load_run(path)
    assert answers.by_task == {"t_a": 1.0} and answers.later == {("t_a", 3): 9.0}
    assert answers.problems == ["line 3: attempt 0 is not a whole number from 1 (the line is not scored)",
                                "line 4: attempt true is not a whole number from 1 (the line is not scored)",
                                "line 5: a second answer for t_a, attempt 3 (the last one counts)"]
    report = score(TASKS[:2], answers)
    # k = 3 (the highest attempt held): t_a right in attempt 1, missing in 2, wrong in 3; t_b missing thrice
    assert report["epochs"] == 3 and report["overall"]["correct"] == 1 and report["overall"]["attempts"] == 6
    # an eval run of one epoch holds attempt 1 only: attempts after the run's epochs are reported, not scored
    one = score(TASKS[:2], answers, epochs=1)
    assert one["overall"] == {"n": 2, "correct": 1, "accuracy": 0.5, "ci95": [0.0945, 0.9055], "answered": 1,
                              "coverage": 0.5, "accuracy_answered": 1.0}
    assert one["answers_file"]["problems"][-1] == "answers for attempt 3, beyond the run's 1 epoch, not scored"


def test_a_run_json_with_epochs_that_are_not_a_count_is_one_error_line(run):
    bundle, folder = run
    (folder / "run.json").write_text(json.dumps({"bundle": fingerprint(bundle), "epochs": "2"}), encoding="utf-8")
    proc = run_cli("score", str(bundle), str(folder), "--out", str(folder / "score"))
    assert (proc.returncode, proc.stderr) == (1, f"error: {folder / 'run.json'}: epochs is \"2\"; expected a whole "
                                                 "number from 1 to 100 (the attempts per task)\n")


def test_wilson_and_pass_hat_against_worked_values():
    # 0 of 30: the upper end 2·(z²/60)/(1 + z²/30) = 0.1135 — where a t or bootstrap interval would say 0-0 %
    assert [round(x, 4) for x in wilson(0.0, 30)] == [0.0, 0.1135]
    assert [round(x, 4) for x in wilson(0.5, 10)] == [0.2366, 0.7634]
    # three tasks, k = 3, right 3, 2 and 0 times: pass^1 = 5/9; pass^2 = (C(3,2) + C(2,2) + 0) / (3·C(3,2)) = 4/9;
    # pass^3 = 1/3 (only the first is right every time)
    assert [round(pass_hat([3, 2, 0], 3, j), 4) for j in (1, 2, 3)] == [0.5556, 0.4444, 0.3333]


RANKING = {"task_id": "t_r", "analysis_type": "ranking", "tier": "knowledge+analytics+rule",
           "answer_format": {"type": "ranking", "key": "state", "k": 3}, "tolerance": TOL,
           "gold": [{"state": "SP", "value": 9.0}, {"state": "RJ", "value": 8.0}, {"state": "MG", "value": 7.0}],
           "base": [{"state": "SP", "value": 9.5}, {"state": "RJ", "value": 8.5}, {"state": "MG", "value": 7.5}]}
# a rule that adds a group: the base breakdown has two rows, the gold three
BREAKDOWN = {"task_id": "t_k", "analysis_type": "decomposition", "tier": "knowledge+analytics+rule",
             "answer_format": {"type": "breakdown", "key": "segment"}, "tolerance": TOL,
             "gold": [{"segment": "a", "value": 1.0}, {"segment": "b", "value": 2.0}, {"segment": "c", "value": 3.0}],
             "base": [{"segment": "a", "value": 1.0}, {"segment": "b", "value": 5.0}]}


def classed(task: dict, answer, against: str = "gold") -> str:
    return failure_class(task, answer, compare(task, answer, against=against), against)


def test_rules_not_applied_truncated_and_which_wins_when_both_hold():
    assert classed(RANKING, RANKING["gold"]) == ""
    assert classed(RANKING, RANKING["base"]) == RULES_NOT_APPLIED
    assert classed(RANKING, RANKING["gold"][:2]) == TRUNCATED  # a preview of the result
    assert classed(RANKING, RANKING["base"][:2]) == TRUNCATED  # short and not the base either
    assert classed(RANKING, []) == "wrong rows"  # no row at all is no reading of a preview
    assert classed(RANKING, list(reversed(RANKING["gold"]))) == "wrong rows"
    assert classed(BREAKDOWN, {"a": 1.0, "c": 3.0}) == TRUNCATED
    # the base answer with fewer rows than the gold: both hold, and equality with the base names the failure
    assert classed(BREAKDOWN, BREAKDOWN["base"]) == RULES_NOT_APPLIED
    # scored against base (the no-rule condition) there are no rules to apply
    assert classed(BREAKDOWN, BREAKDOWN["gold"], against="base") == "wrong rows"
    value = value_task("t_v", 3.0, base=30.0)
    assert (classed(value, 30.0), classed(value, 31.0), classed(value, None)) == \
        (RULES_NOT_APPLIED, "wrong value", "no answer")


def test_the_failure_classes_count_in_score_md_with_their_share(tmp_path):
    from dptool.evaluate.report import markdown

    tasks = [RANKING, BREAKDOWN, value_task("t_v", 3.0, base=30.0), value_task("t_w", 1.0)]
    report = score(tasks, Answers({"t_r": RANKING["gold"][:1], "t_k": BREAKDOWN["base"], "t_v": 30, "t_w": 1}, []))
    assert report["reasons"] == {RULES_NOT_APPLIED: 2, TRUNCATED: 1}
    md = markdown(report, "run")
    assert "| rules not applied | 2 | 66.7 % |\n| truncated | 1 | 33.3 % |" in md


# ---- dptool eval --epochs, against the loopback Ollama server ------------------------------------------------


@pytest.fixture(scope="module")
def bundle(demo_bundle) -> Path:
    return demo_bundle[0]


def eval_run(bundle: Path, server, out: Path, *extra: str):
    return run_cli("eval", str(bundle), "--model", "ollama:test-model", "--ollama-host", server.url, "--out", str(out),
                   *extra)


def reply(value) -> dict:
    return {"content": f"<answer>{json.dumps(value)}</answer>"}


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_eval_epochs_2_writes_two_attempts_per_task_resumes_by_attempt_and_reports_pass_hat_2(bundle, ollama_server,
                                                                                             tmp_path):
    from dptool.evaluate.score import load_tasks

    t0, t1 = [t for t in load_tasks(bundle) if t.get("gold_sql")][:2]
    ids = ["--tasks", f"{t0['task_id']},{t1['task_id']}", "--epochs", "2"]
    out = tmp_path / "run"
    # every task's attempt 1 first, then attempt 2: t0 right, t1 right, then the server refuses the third call
    ollama_server.chat_replies += [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": "select nope"}}]}, reply(t0["gold"]),
        reply(t1["gold"]), {"status": 400, "error": "bad request"}]
    stopped = eval_run(bundle, ollama_server, out, *ids)
    assert stopped.returncode == 1
    assert stopped.stderr.splitlines()[-1].endswith("(2 of 4 attempts done; run the same command again to resume)")
    assert [(a["task_id"], a["attempt"]) for a in lines(out / "answers.jsonl")] == \
        [(t0["task_id"], 1), (t1["task_id"], 1)]

    ollama_server.requests.clear()
    ollama_server.chat_replies += [reply(t0["gold"]), reply({"value": "wrong"})]
    again = eval_run(bundle, ollama_server, out, *ids)
    assert again.returncode == 0, again.stderr
    assert "2 attempts to run (2 tasks × 2), 2 already answered" in again.stdout
    assert len(ollama_server.requests) == 2  # only the two second attempts ran
    answers = lines(out / "answers.jsonl")
    assert [(a["task_id"], a["attempt"], a["transcript"]) for a in answers] == [
        (t["task_id"], n, f"transcripts/{t['task_id']}-{n}.json") for n in (1, 2) for t in (t0, t1)]
    first = answers[0]
    assert (first["tool_calls"], first["sql_errors"], first["turns"], first["prompt_tokens"]) == (1, 1, 2, 20)
    assert first["seconds"] > 0 and all((out / a["transcript"]).is_file() for a in answers)
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["epochs"] == 2
    # t0 right twice, t1 right once: pass@1 3/4, pass^2 1/2
    assert "accuracy (pass@1) 75.0 %: 3 of 4 attempts correct (2 tasks × 2 attempts)" in again.stdout
    assert "pass^2 50.0 %: 1 of 2 tasks right in every attempt" in again.stdout
    report = json.loads((out / "score.json").read_text(encoding="utf-8"))
    assert report["results"][0]["sql_errors"] == 0.5 and report["results"][0]["tool_calls"] == 0.5

    other = eval_run(bundle, ollama_server, out, "--tasks", f"{t0['task_id']},{t1['task_id']}")
    assert (other.returncode, other.stderr) == (1, f"error: {out}: holds a run with epochs = 2, not 1; rerun with "
                                                   "the same settings to resume, or choose another --out\n")
