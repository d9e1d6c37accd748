"""At home in a dbt repo: everyday builds without the gold models, gold models where the README says, and the
rule macros in each gold model's lineage (dbt for real, on the demo and on the subscriptions fixture)."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from dptool.project.dbt import GOLD_VARS, DbtProject
from dptool.project.scaffold import GOLD_SELECTOR_YML, SCHEMA_LINE, SELECTORS_HEADER, _indent
from tests.conftest import REPO
from tests.subscriptions import GENERATE_ARGS, cli, copy_fixture

DEV_SCHEMAS = Path(__file__).parent / "fixtures" / "dev_schemas" / "generate_schema_name.sql"


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


@pytest.fixture(scope="module")
def dev_schemas(tmp_path_factory) -> tuple[Path, str]:
    """The subscriptions fixture with a generate_schema_name that ignores custom schemas outside prod, set up as
    a user does (init, deps, build, generate); with init's output."""
    root = copy_fixture(tmp_path_factory.mktemp("dev_schemas") / "project")
    shutil.copy(DEV_SCHEMAS, root / "macros" / "generate_schema_name.sql")
    init = cli("init", "--project-dir", str(root))
    assert init.returncode == 0, init.stderr
    project = DbtProject(root)
    project.run("deps")
    failed = [r.unique_id for r in project.run("build") if r.status not in ("success", "pass")]
    assert not failed, failed
    proc = cli("generate", "--project-dir", str(root), "--out", str(root / "bundle"), *GENERATE_ARGS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root, init.stdout


def _words(text: str) -> str:
    return " ".join(text.split())


def _gold_schemas(root: Path) -> set[str]:
    nodes = DbtProject(root).load_manifest()["nodes"]
    return {n["schema"] for n in nodes.values() if "dptool_gold" in n.get("tags", []) and n["resource_type"] == "model"}


def test_gold_models_land_where_the_projects_generate_schema_name_puts_them_and_init_says_how_to_steer(dev_schemas):
    root, init_output = dev_schemas
    assert (f"macros/generate_schema_name.sql note its generate_schema_name decides where gold models land (they "
            f"ask for the custom schema dptool_gold); to keep them in schema dptool_gold, make this the macro's first "
            f"line: {SCHEMA_LINE}") in _words(init_output)
    # as the README says: this macro puts every custom schema in the target's schema outside prod
    DbtProject(root).run("parse", gold=True)  # generate leaves its gold models to the next dbt command's parse
    assert _gold_schemas(root) == {"main"}

    macro = root / "macros" / "generate_schema_name.sql"
    text = macro.read_text(encoding="utf-8")
    head, rest = text.split("{% macro generate_schema_name(custom_schema_name, node) -%}\n")
    macro.write_text(head + "{% macro generate_schema_name(custom_schema_name, node) -%}\n    " + SCHEMA_LINE + "\n"
                     + rest, encoding="utf-8")
    again = cli("init", "--project-dir", str(root))
    assert "macros/generate_schema_name.sql ok its generate_schema_name places the gold models" in \
        _words(again.stdout)
    results = DbtProject(root).run("build", "--selector", "dptool_gold", gold=True)
    assert results and all(r.status in ("success", "pass") for r in results)
    assert _gold_schemas(root) == {"dptool_gold"}
    with duckdb.connect(str(root / "subscriptions.duckdb"), read_only=True) as con:
        tables = {t for (t,) in con.sql("select table_name from information_schema.tables "
                                        "where table_schema = 'dptool_gold'").fetchall()}
    assert "dptool_tasks" in tables and {r.name for r in results if r.resource_type == "model"} <= tables
    # the models themselves stay where the project puts them
    assert {n["schema"] for n in DbtProject(root).load_manifest()["nodes"].values()
            if n["resource_type"] == "model" and n["package_name"] == "subscriptions"
            and "dptool_gold" not in n["tags"]} == {"main"}


def test_a_repos_own_dbt_builds_build_no_gold_model_whatever_they_select(dev_schemas):
    """A --select, --exclude or --selector of the repo's own replaces any default selector: the gold models stay out
    because they are disabled unless the var asks for them (issue 28: `dbt build --exclude path:jaffle-data` built
    jaffle-shop's 120 gold models and their tests)."""
    root, _ = dev_schemas
    project = DbtProject(root)
    gold = {f"model.subscriptions.{p.stem}" for p in (root / "models" / "dptool_gold").glob("*.sql")}
    assert len(gold) > 10  # generate wrote gold models
    for args in (("--exclude", "path:seeds"), ("--select", "fct_invoices+"), ("--select", "*")):
        results = project.run("build", *args)  # as the user types it: no var
        assert results and all(r.status in ("success", "pass") for r in results), args
        assert [r.unique_id for r in results if r.unique_id in gold or r.attached_node in gold] == [], args
    # asked for, they come in, and their tests with them
    assert gold & set(dbt_ls(project, "--select", "fct_invoices+", "--vars", GOLD_VARS))
    asked = dbt_ls(project, "--selector", "dptool_gold", "--vars", GOLD_VARS)
    assert gold <= set(asked) and any(uid.startswith("test.") for uid in asked)  # their rule tests
