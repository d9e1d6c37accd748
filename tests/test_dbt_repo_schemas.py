"""Gold models where the README says on a project whose generate_schema_name ignores custom schemas outside prod,
and a repo's own builds without them, whatever they select (dbt for real, on the subscriptions fixture).

Apart from tests/test_dbt_repo.py, which reads the generated demo bundle: this module runs on another pytest-xdist
worker than every reader of that bundle."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from dptool.project.dbt import GOLD_VARS, DbtProject
from dptool.project.scaffold import SCHEMA_LINE
from tests.subscriptions import GENERATE_ARGS, cli, copy_fixture
from tests.test_dbt_repo import dbt_ls

DEV_SCHEMAS = Path(__file__).parent / "fixtures" / "dev_schemas" / "generate_schema_name.sql"


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
