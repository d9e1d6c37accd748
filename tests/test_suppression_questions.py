"""Suppression-aware questions (issue 26): a question never asks for a group, month or breakdown row that the rules
in force remove; one whose rules remove some says it lists only those its policies allow to be reported."""

from __future__ import annotations

import copy
import json

from dptool.generate.phrase import REPORTABLE
from dptool.generate.support import LISTING
from dptool.generate.validate import identifiers, issues, removed_group_problem


def _tasks(bundle) -> list[dict]:
    return [json.loads(line) for line in (bundle / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]


def _listed(task: dict) -> set[str]:
    if task["analysis_type"] == "trend_analysis":
        return {g["group"] for g in task["support"]["groups"]}
    key = task["answer_format"]["key"]
    return {str(g[key]) for g in task["gold"]}


def test_no_question_asks_for_a_group_its_rules_remove(demo_bundle):
    bundle, _ = demo_bundle
    listing = [t for t in _tasks(bundle) if t["analysis_type"] in LISTING]
    assert listing
    for task in listing:
        removed = task["support"]["removed"]
        question = " ".join(task["question"].split())
        assert removed_group_problem(task, question) is None, task["task_id"]
        assert (REPORTABLE in question) == bool(removed), task["task_id"]
        assert not _listed(task) & set(map(str, removed)), task["task_id"]
        if task["rule_scope"] == "none":
            assert not removed, task["task_id"]  # before any policy, no policy removes a group


def test_a_removed_group_the_question_asks_for_fails(demo_bundle, demo_catalog):
    bundle, _ = demo_bundle
    banned = identifiers(demo_catalog)
    task = next(t for t in _tasks(bundle) if t["analysis_type"] == "decomposition" and not t["support"]["removed"]
                and ". " in t["question"])
    assert "removed_group_asked" not in issues(task, demo_catalog, banned)
    # "for every region" while the rules removed one: the question promises a group the gold does not have
    suppressed = copy.deepcopy(task)
    suppressed["support"]["removed"] = ["a region a policy suppresses"]
    assert "removed_group_asked" in issues(suppressed, demo_catalog, banned)
    # and a question that says groups are left out when none is: its promise and its gold disagree too
    said = copy.deepcopy(task)
    said["question"] = said["question"].replace(". ", f" {REPORTABLE}. ", 1)
    assert REPORTABLE in said["question"]
    assert "removed_group_asked" in issues(said, demo_catalog, banned)
