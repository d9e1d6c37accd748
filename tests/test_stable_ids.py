"""A benchmark keeps its identity (issue 24): a task's id names its question across targets and regenerations,
and a refresh after adding a rule says which golds changed, by id, and drops nothing still asked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dptool.evaluate.score import load_tasks
from dptool.project.dbt import DbtProject
from tests.conftest import run_cli

RULE_SQL = """{% macro rule__quick_delivery_exclusion(metric, q) %}
  {% do q.where.append('delivery_days >= 4') %}
  {{ return(q) }}
{% endmacro %}
"""
RULE_YML = """version: 2
macros:
  - name: rule__quick_delivery_exclusion
    description: '{{ doc("rule__quick_delivery_exclusion") }}'
    meta:
      dptool:
        rule:
          title: Quick Delivery Exclusion
          type: exclusionary
          effective_from: "2017-01-01"
          modifies: [avg_delivery_days]
"""
RULE_DOC = """{% docs rule__quick_delivery_exclusion %}
# POL-ANL-099 — Quick Deliveries

## Rule

**Orders delivered within 3 calendar days of purchase are courier tests and leave the Average Delivery Time.**
{% enddocs %}
"""


@pytest.fixture(scope="module")
def project(demo_project, tmp_path_factory) -> Path:
    """A copy of the built demo project of this module's own: a rule is added to it."""
    dest = tmp_path_factory.mktemp("stable_ids") / "project"
    shutil.copytree(demo_project.project_dir, dest, symlinks=True,
                    ignore=shutil.ignore_patterns("logs", "dptool_gold", "dptool_ablation", "__pycache__"))
    return dest


def generate(project: Path, out: Path, *args: str) -> list[dict]:
    proc = run_cli("generate", "--project-dir", str(project), "--out", str(out), "--quiet", *args)
    assert proc.returncode == 0, proc.stderr
    return load_tasks(out)


@pytest.fixture(scope="module")
def bundles(project, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("stable_ids_bundles")
    generate(project, root / "small", "--target", "40", "--min-per-type", "2")
    generate(project, root / "large", "--target", "100", "--min-per-type", "2")
    # one rule more, then the large bundle refreshed (its target and minimum reused from its bundle.json)
    (project / "macros" / "ecommerce" / "rule__quick_delivery_exclusion.sql").write_text(RULE_SQL, encoding="utf-8")
    (project / "macros" / "ecommerce" / "_quick_delivery.yml").write_text(RULE_YML, encoding="utf-8")
    (project / "models" / "ecommerce" / "docs" / "rule__quick_delivery_exclusion.md").write_text(RULE_DOC,
                                                                                                 encoding="utf-8")
    DbtProject(project).run("parse")
    generate(project, root / "refreshed", "--refresh", str(root / "large"))
    return {name: root / name for name in ("small", "large", "refreshed")}


def by_question(tasks: list[dict]) -> dict[str, str]:
    return {t["question"]: t["task_id"] for t in tasks}


def test_two_targets_give_every_task_both_hold_one_id(bundles):
    small, large = load_tasks(bundles["small"]), load_tasks(bundles["large"])
    shared = {t["task_id"] for t in small} & {t["task_id"] for t in large}
    assert len(shared) > 0.8 * len(small)
    big = {t["task_id"]: t for t in large}
    for task in small:
        if task["task_id"] in big:  # the same id is the same question, with the same gold
            assert (task["question"], task["gold"]) == (big[task["task_id"]]["question"], big[task["task_id"]]["gold"])
    # and the same question has the same id
    small_q, large_q = by_question(small), by_question(large)
    assert {q: small_q[q] for q in small_q.keys() & large_q.keys()} == \
        {q: large_q[q] for q in small_q.keys() & large_q.keys()}


def test_adding_a_rule_keeps_the_id_of_every_question_still_asked(bundles):
    old, new = load_tasks(bundles["large"]), load_tasks(bundles["refreshed"])
    old_q, new_q = by_question(old), by_question(new)
    same_text = old_q.keys() & new_q.keys()
    assert len(same_text) > 0.9 * len(old)
    assert all(old_q[q] == new_q[q] for q in same_text)


def test_the_refresh_lists_each_changed_gold_and_drops_nothing_still_asked(bundles):
    d = json.loads((bundles["refreshed"] / "refresh.json").read_text(encoding="utf-8"))
    new = {t["task_id"]: t for t in load_tasks(bundles["refreshed"])}
    old = {t["task_id"]: t for t in load_tasks(bundles["large"])}
    assert d["changed"], "the new rule changes some gold of Average Delivery Time"
    for r in d["changed"]:
        assert r["old_id"] == r["new_id"] and r["old_gold"] == old[r["old_id"]]["gold"]
        assert r["new_gold"] == new[r["new_id"]]["gold"] != r["old_gold"]
        assert new[r["new_id"]]["metric_ids"][0] == "avg_delivery_days"
        assert "quick_delivery_exclusion" in r["new_rules"] and "quick_delivery_exclusion" not in r["old_rules"]
    new_questions = {t["question"] for t in new.values()}
    assert all(r["old_id"] not in new and r["question"] not in new_questions for r in d["dropped"])
    assert len(d["unchanged"]) + len(d["changed"]) + len(d["dropped"]) == len(old)
    text = (bundles["refreshed"] / "refresh.md").read_text(encoding="utf-8")
    assert "Made as the old bundle was: target 100, min per type 2, seed 42." in text
    assert f"{d['changed'][0]['new_id']} |" in text
