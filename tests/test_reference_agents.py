"""Reference agents prove the scorer end to end on the demo bundle: `dptool answer` then `dptool score`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dptool.answers import compare
from dptool.bundle import fingerprint
from dptool.evaluate.failures import RULES_NOT_APPLIED, WITHDRAWN_APPLIED
from dptool.evaluate.intervals import wilson
from dptool.evaluate.reference import reference_records
from dptool.evaluate.score import load_tasks
from tests.conftest import run_cli

RULE_TIER = "knowledge+analytics+rule"


@pytest.fixture(scope="module")
def bundle(demo_bundle) -> Path:
    return demo_bundle[0]


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")


@pytest.fixture(scope="module")
def scored(bundle, tmp_path_factory):
    """Answers and scores of each reference agent: {agent: (answers path, score.json, stdout)}.

    gold-sql and base-sql are answered in one pass (the same queries); `dptool answer` itself is tested on
    a small bundle below, `dptool score` here.
    """
    root = tmp_path_factory.mktemp("reference")
    records = reference_records(bundle, ("gold-sql", "base-sql", "empty"))
    out = {}
    for agent in ("gold-sql", "base-sql", "empty"):
        answers = root / f"{agent}.jsonl"
        write_jsonl(answers, records[agent])
        proc = run_cli("score", str(bundle), str(answers), "--out", str(root / agent))
        assert proc.returncode == 0, proc.stderr
        out[agent] = (answers, json.loads((root / agent / "score.json").read_text(encoding="utf-8")), proc.stdout)
    return out


@pytest.fixture(scope="module")
def small_bundle(bundle, tmp_path_factory) -> Path:
    """The demo bundle cut to its first task of each analysis type (warehouse and kb linked, not copied)."""
    small = tmp_path_factory.mktemp("small") / "bundle"
    small.mkdir()
    first: dict[str, dict] = {}
    for task in load_tasks(bundle):
        first.setdefault(task["analysis_type"], task)
    write_jsonl(small / "tasks.jsonl", list(first.values()))
    for name in ("warehouse.duckdb", "kb"):
        (small / name).symlink_to(bundle / name)
    return small


def test_the_answer_command_writes_the_reference_answers(scored, small_bundle, tmp_path):
    n = len(load_tasks(small_bundle))
    for agent in ("gold-sql", "empty"):
        proc = run_cli("answer", str(small_bundle), "--agent", agent, "--out", str(tmp_path / f"{agent}.jsonl"))
        assert proc.returncode == 0, proc.stderr
        # progress as generate shows it: a stage line first, then the bar (off a terminal, a line with its count)
        assert proc.stdout.splitlines()[0] == f"[answer] {agent} on {n} tasks of {small_bundle}" + (
            ": each task's base_sql and gold_sql run on the bundle's warehouse" if agent == "gold-sql" else "")
        assert proc.stderr.splitlines()[-1].startswith(f"  {agent}: {n}/{n} (100%), ")
        full = {r["task_id"]: r for r in map(json.loads, scored[agent][0].read_text(encoding="utf-8").splitlines())}
        written = [json.loads(line) for line in (tmp_path / f"{agent}.jsonl").read_text(encoding="utf-8").splitlines()]
        fp = fingerprint(small_bundle)
        assert written == ([{**full[t["task_id"]], "bundle": fp} for t in load_tasks(small_bundle)]
                           if agent == "gold-sql" else [])
    assert proc.stdout.splitlines()[1:] == [f"empty: 0 answers, 0 empty, of {n} tasks -> {tmp_path / 'empty.jsonl'}"]
    scored_small = run_cli("score", str(small_bundle), str(tmp_path / "gold-sql.jsonl"), "--out", str(tmp_path / "s"))
    assert scored_small.stdout.startswith(f"accuracy 100.0 %: {n} of {n} tasks correct")


def test_gold_sql_scores_100_percent(scored, bundle):
    _, report, stdout = scored["gold-sql"]
    n = len(load_tasks(bundle))
    assert report["overall"] == {"n": n, "correct": n, "accuracy": 1.0, "answered": n, "coverage": 1.0,
                                 "accuracy_answered": 1.0, "ci95": [round(wilson(1.0, n)[0], 4), 1.0]}
    assert stdout.startswith(f"accuracy 100.0 %: {n} of {n} tasks correct, a task without an answer counting as "
                             f"wrong; scored against gold\ncoverage {n} of {n} tasks answered (100.0 %); accuracy "
                             f"over the answered 100.0 % ({n} of {n})\n")


def test_base_sql_scores_0_percent_on_rule_tasks(scored):
    _, report, _ = scored["base-sql"]
    rule_tier = report["by_tier"]["knowledge+analytics+rule"]
    assert rule_tier["n"] > 0 and rule_tier["correct"] == 0, \
        [r["task_id"] for r in report["results"] if r["correct"] and r["rule_types"]]


def test_base_sql_passes_a_task_only_when_its_stored_base_passes_as_gold(scored, bundle):
    _, report, _ = scored["base-sql"]
    tasks = {t["task_id"]: t for t in load_tasks(bundle)}
    for r in report["results"]:
        task = tasks[r["task_id"]]
        if not task.get("base_sql"):
            assert r["reason"] == "no answer", r  # a knowledge task has no SQL to run
        elif not task["rule_ids"]:
            assert r["correct"], r  # without rules, base is gold
        elif r["correct"]:
            # only when the rule's effect hides inside the task's tolerance, which validation rejects
            assert task["gold"] != task["base"] and compare(task, task["base"]).correct, r


def test_base_sql_reproduces_every_base_answer(scored, bundle, tmp_path):
    answers, _, _ = scored["base-sql"]
    given = {r["task_id"]: r["answer"] for r in map(json.loads, answers.read_text(encoding="utf-8").splitlines())}
    with_sql = [t for t in load_tasks(bundle) if t.get("base_sql")]
    assert with_sql and all(compare(t, given[t["task_id"]], against="base").correct for t in with_sql)
    # scored --against base (the no-rule condition), a counterfactual expects its rule-free answer: its base
    # applies every rule, the withdrawn one included
    proc = run_cli("score", str(bundle), str(answers), "--against", "base", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "score.json").read_text(encoding="utf-8"))
    assert report["against"] == "base"
    wrong = {r["task_id"] for r in report["results"] if not r["correct"] and r["task_id"] in given
             and given[r["task_id"]] is not None}
    tasks = {t["task_id"]: t for t in with_sql}
    assert wrong == {i for i, t in tasks.items() if t["analysis_type"] == "counterfactual"
                     and not compare(t, t["base"], against="rule_free").correct}


def test_on_counterfactuals_every_rule_applied_is_withdrawn_rule_still_applied_and_no_rule_is_rules_not_applied(
        scored, bundle, tmp_path):
    tasks = [t for t in load_tasks(bundle) if t["analysis_type"] == "counterfactual"]
    assert tasks and all(isinstance(t.get("rule_free"), dict) for t in tasks)
    # with no rule left in force, the gold is computed under no rule: the two queries agree
    alone = [t for t in tasks if not t["rules_in_force"]]
    assert alone and all(t["rule_free"] == t["gold"] for t in alone)
    # base-sql answers each counterfactual with every rule applied: none is "rules not applied"
    _, report, stdout = scored["base-sql"]
    misses = [r for r in report["results"] if r["analysis_type"] == "counterfactual"]
    assert len(misses) == len(tasks) and {r["failure"] for r in misses} == {WITHDRAWN_APPLIED}
    # a rule-ignoring answer set: right where the gold is the rule-free answer, else "rules not applied"
    ignoring = tmp_path / "rule-free.jsonl"
    write_jsonl(ignoring, [{"task_id": t["task_id"], "answer": t["rule_free"]} for t in tasks])
    proc = run_cli("score", str(bundle), str(ignoring), "--type", "counterfactual", "--out", str(tmp_path / "s"))
    assert proc.returncode == 0, proc.stderr
    ignored = json.loads((tmp_path / "s" / "score.json").read_text(encoding="utf-8"))
    right = [r for r in ignored["results"] if r["correct"]]
    by_id = {t["task_id"]: t for t in tasks}
    # where no rule and every rule give one answer, it names the withdrawn rule (as base-sql's must)
    assert {r["task_id"]: r["failure"] for r in ignored["results"] if not r["correct"]} == {
        r["task_id"]: WITHDRAWN_APPLIED if compare(by_id[r["task_id"]], by_id[r["task_id"]]["rule_free"],
                                                   against="base").correct else RULES_NOT_APPLIED
        for r in ignored["results"] if not r["correct"]}
    assert RULES_NOT_APPLIED in {r["failure"] for r in ignored["results"]}
    assert len(alone) <= len(right) < len(tasks)
    # the tasks answerable without the rules are counted, in score.md, on the terminal and in card.md
    assert ignored["right_without_rules"] == {RULE_TIER: len(right)}
    counted = report["right_without_rules"][RULE_TIER]
    assert counted == len(right)  # validation drops any other rule task whose base would pass
    n = report["by_tier"][RULE_TIER]["n"]
    assert f"{counted} of {n} {RULE_TIER} tasks (" in stdout
    card = (bundle / "card.md").read_text(encoding="utf-8")
    assert f"| {RULE_TIER} | {n} | {counted} |" in card


def test_empty_answers_nothing_and_every_task_is_no_answer(scored):
    answers, report, _ = scored["empty"]
    assert answers.read_text(encoding="utf-8") == ""
    assert report["overall"]["correct"] == 0 and report["overall"]["answered"] == 0
    assert report["reasons"] == {"no answer": report["overall"]["n"]}


def test_reports_are_self_contained_and_byte_stable(scored, bundle, tmp_path):
    answers, _, _ = scored["base-sql"]
    for out in ("a", "b"):
        assert run_cli("score", str(bundle), str(answers), "--out", str(tmp_path / out)).returncode == 0
    for name in ("score.json", "score.md", "report.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    page = (tmp_path / "a" / "report.html").read_text(encoding="utf-8")
    assert " src=" not in page and " href=" not in page  # self-contained: its one script is inline
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}
    tiers = [page.index(f">{word}</text>") for word in ("knowledge", "+ analytics", "+ rule")]
    assert tiers == sorted(tiers)  # the Figure 2 order: knowledge, + analytics, + rule
    md = (tmp_path / "a" / "score.md").read_text(encoding="utf-8")
    assert "## By analysis type" in md and "## By rule type" in md and "## By domain" in md


def test_a_missing_answers_file_is_one_error_line(bundle, tmp_path):
    proc = run_cli("score", str(bundle), str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "s"))
    assert proc.returncode == 1
    assert proc.stderr == f"error: {tmp_path / 'nope.jsonl'}: answers file not found\n"
