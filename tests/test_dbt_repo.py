"""At home in a dbt repo: everyday dbt commands select no gold model, and each gold model's lineage holds the rule
macros it applies (dbt for real, on the demo). Where gold models land, and a repo's own builds without them:
tests/test_dbt_repo_schemas.py."""

from __future__ import annotations

import contextlib
import json

from dptool.project.dbt import GOLD_VARS, DbtProject
from dptool.project.scaffold import GOLD_SELECTOR_YML, SELECTORS_HEADER, _indent
from tests.conftest import REPO


def dbt_ls(project: DbtProject, *args: str) -> dict[str, list[str]]:
    """`dbt ls` with `args`, as a user runs it: unique_id -> tags."""
    from dbt.cli.main import dbtRunner

    with contextlib.chdir(project.project_dir):
        outcome = dbtRunner().invoke(["ls", *args, "--project-dir", str(project.project_dir), "--profiles-dir",
                                      str(project.profiles_dir), "--output", "json", "--output-keys", "unique_id tags",
                                      "--quiet", "--log-level-file", "none"])
    assert outcome.success, outcome.exception
    return {n["unique_id"]: n.get("tags", []) for n in map(json.loads, outcome.result)}  # a metric has none


def test_the_demo_selectors_are_those_init_writes():
    assert (REPO / "selectors.yml").read_text(encoding="utf-8") == SELECTORS_HEADER + _indent(GOLD_SELECTOR_YML, "  ")


def test_no_everyday_dbt_command_selects_a_gold_model_and_the_gold_selector_with_the_var_all_of_them(demo_bundle,
                                                                                                     demo_project):
    everyday = dbt_ls(demo_project)
    for args in (("--exclude", "path:seeds"), ("--select", "*"), ("--select", "orders+"), ("--selector", "dptool_gold"),
                 ("--select", "tag:dptool_gold")):
        assert not [uid for uid, tags in dbt_ls(demo_project, *args).items() if "dptool_gold" in tags], args
    gold = dbt_ls(demo_project, "--selector", "dptool_gold", "--vars", GOLD_VARS)
    everything = dbt_ls(demo_project, "--select", "*", "--vars", GOLD_VARS)
    assert set(everyday) | set(gold) == set(everything) and not set(everyday) & set(gold)
    tasks = {p.stem for p in (demo_project.project_dir / "models" / "dptool_gold").glob("*.sql")}
    models = {uid.rsplit(".", 1)[-1] for uid in gold if uid.startswith("model.")}
    assert len(tasks) > 1 and models == tasks
    assert any(uid.startswith("test.") for uid in gold)  # and their rule tests


def test_each_gold_model_lists_the_rule_macros_it_applies(demo_bundle, demo_project, demo_catalog):
    out, _ = demo_bundle
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    demo_project.run("parse", gold=True)  # generate leaves the parse of its models to the next dbt command
    nodes = demo_project.load_manifest()["nodes"]
    checked, metrics = 0, set()
    for task in tasks:
        if not task["gold_sql"]:
            continue
        node = nodes[task["dbt_node"]]
        # the gold variant's rules, and a counterfactual's withdrawn rule (its base variant applies it)
        applied = [*task["rules_in_force"], *([task["withdrawn_rule"]] if task.get("withdrawn_rule") else [])]
        rules = {f"macro.dptool_demo.rule__{r}" for r in applied}
        macros = set(node["depends_on"]["macros"])  # a trend's period calls dbt.date_trunc too
        assert "macro.dptool.gold" in macros and {m for m in macros if ".rule__" in m} == rules, task["task_id"]
        metric = node["config"]["meta"]["dptool"]["task"]["metric"]
        # the metric, and a composite's components (it reads each of them, under its own rules)
        tree = demo_catalog.metric_tree(metric)
        assert metric in task["metric_ids"] and sorted(node["depends_on"]["nodes"]) == \
            sorted(f"model.dptool_demo.{m}" for m in tree)
        metrics.add(f"model.dptool_demo.{metric}")
        assert (node["config"]["group"], node["config"]["docs"]["show"]) == ("dptool_gold", False)
        checked += bool(rules)
    assert checked > 100  # every rule task, counterfactuals (whose base applies the withdrawn rule) included
    overview = nodes["model.dptool_demo.dptool_tasks"]
    assert set(overview["depends_on"]["nodes"]) == metrics
    assert overview["config"]["docs"]["show"] is True and overview["config"]["group"] == "dptool_gold"
