"""`dptool generate` refuses a manifest older than the project's own files (issue 23, item 7b).

On a copy of the built demo project (its files, target/manifest.json and dbt_packages/, times kept as a copy of
a fixture keeps them): a file's text is compared with dbt's checksum (the manifest's, or its partial-parse
state's), the time of a file dbt took none of with the manifest's `metadata.generated_at`; dptool's own folders
do not count.
"""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest

from dptool.errors import DptoolError
from dptool.project.dbt import DbtProject
from dptool.project.prepare import check_manifest_current
from tests.conftest import run_cli

METRICS_YML = "models/ecommerce/metrics/_ecommerce__metrics.yml"
METRIC_SQL = "models/ecommerce/metrics/avg_delivery_days.sql"
RULE_MACRO = "macros/ecommerce/rule__outlier_exclusion.sql"


@pytest.fixture
def project(demo_project, tmp_path) -> DbtProject:
    """The built demo, copied with its times (shutil.copytree keeps them), without its data."""
    dest = tmp_path / "project"
    shutil.copytree(demo_project.project_dir, dest, symlinks=True,
                    ignore=shutil.ignore_patterns("*.duckdb", "*.duckdb.wal", "logs", "dptool_gold", "__pycache__"))
    return DbtProject(dest)


def refusal(project: DbtProject) -> str:
    with pytest.raises(DptoolError) as info:
        check_manifest_current(project, project.load_manifest())
    return str(info.value)


def later(path) -> None:
    """The file written a minute after dbt parsed the project (no sleep: the time is set)."""
    os.utime(path, (time.time() + 60,) * 2)


def test_a_fresh_copy_is_current(project):
    check_manifest_current(project, project.load_manifest())


def test_a_metric_value_changed_in_yaml_and_not_parsed_is_refused(project):
    yml = project.project_dir / METRICS_YML
    yml.write_text(yml.read_text(encoding="utf-8").replace("value: avg(delivery_days)",
                                                           "value: max(delivery_days)"), encoding="utf-8")
    later(yml)
    assert refusal(project) == (f"{project.manifest_path}: older than {METRICS_YML} (changed since dbt parsed the "
                                f"project); run `dbt parse` (or `dbt build`) in {project.project_dir} first")


def test_a_models_text_is_compared_by_content(project):
    sql = project.project_dir / METRIC_SQL
    later(sql)  # touched (a checkout, a copy): the same text, a new time
    check_manifest_current(project, project.load_manifest())
    before = sql.stat().st_mtime - 3600
    sql.write_text(sql.read_text(encoding="utf-8") + "\n-- changed\n", encoding="utf-8")
    os.utime(sql, (before, before))  # an old time does not hide a new text
    assert f"older than {METRIC_SQL} (its text is not the one dbt parsed)" in refusal(project)


def test_a_rule_macro_changed_is_refused_and_the_newest_file_named(project):
    macro, yml = project.project_dir / RULE_MACRO, project.project_dir / METRICS_YML
    macro.write_text(macro.read_text(encoding="utf-8").replace("<= 60", "<= 90"), encoding="utf-8")
    yml.write_text(yml.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    os.utime(yml, (time.time() + 30,) * 2)
    later(macro)
    assert f"older than {RULE_MACRO} (changed since dbt parsed the project; 1 more file changed too)" \
        in refusal(project)


def test_a_deleted_model_and_a_new_one_are_refused(project):
    (project.project_dir / METRIC_SQL).unlink()
    assert f"older than {METRIC_SQL} (deleted since dbt parsed the project)" in refusal(project)
    (project.project_dir / METRIC_SQL).write_text("select 1 as x\n", encoding="utf-8")
    new = project.project_dir / "models" / "ecommerce" / "new_model.sql"
    new.write_text("select 1 as x\n", encoding="utf-8")
    later(new)
    assert "older than models/ecommerce/new_model.sql (new since dbt parsed the project" in refusal(project)


def test_what_dptool_writes_into_the_project_does_not_count(project):
    root = project.project_dir
    for folder in ("models/dptool_gold", "models/dptool_semantic", "models/dptool_batch", "models/dptool_ablation",
                   "models/dptool_link_tmp", "macros/dptool_link_tmp", "target/dptool_last_good", "logs"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        for name in ("t_0001.sql", "_props.yml", "docs.md"):
            (root / folder / name).write_text("select 1 as x\n", encoding="utf-8")
            later(root / folder / name)
    check_manifest_current(project, project.load_manifest())


def test_dbt_parse_makes_it_current_again(project):
    yml = project.project_dir / METRICS_YML
    yml.write_text(yml.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    os.utime(yml, (time.time() - 5,) * 2)  # written just before the parse (a time in the future would stay newer)
    project.run("parse")
    check_manifest_current(project, project.load_manifest())


def test_generate_refuses_a_stale_manifest_in_one_line(project, tmp_path):
    yml = project.project_dir / METRICS_YML
    yml.write_text(yml.read_text(encoding="utf-8").replace("value: avg(delivery_days)",
                                                           "value: max(delivery_days)"), encoding="utf-8")
    later(yml)
    before = json.loads(project.manifest_path.read_text(encoding="utf-8"))
    proc = run_cli("generate", "--project-dir", str(project.project_dir), "--out", str(tmp_path / "bundle"),
                   "--quiet")
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines() == [
        f"error: {project.manifest_path}: older than {METRICS_YML} (changed since dbt parsed the project); run "
        f"`dbt parse` (or `dbt build`) in {project.project_dir} first"]
    assert not (tmp_path / "bundle").exists()
    assert json.loads(project.manifest_path.read_text(encoding="utf-8")) == before


# ---- held-out round four (issue 23's "done when"): other changes dbt has not parsed ---------------------------------

RULE_DOC = "models/ecommerce/docs/rule__delivery_sla_grace_period.md"


@pytest.mark.parametrize(("path", "change", "shown"), [
    (RULE_DOC, lambda t: t.replace("1", "2", 1), f"older than {RULE_DOC} (changed since dbt parsed"),
    ("dbt_project.yml", lambda t: t + "\n# edited\n", "older than dbt_project.yml (changed since dbt parsed"),
    (RULE_MACRO, None, f"older than {RULE_MACRO} (deleted since dbt parsed"),
    ("macros/ecommerce/rule__mine.sql", "{% macro rule__mine(q) %}{{ return(q) }}{% endmacro %}\n",
     "older than macros/ecommerce/rule__mine.sql (new since dbt parsed"),
    ("models/ecommerce/metrics/_extra.yml", "version: 2\n", "older than models/ecommerce/metrics/_extra.yml"),
], ids=["rule-document", "dbt-project-yml", "macro-deleted", "macro-new", "yaml-new"])
def test_round_four_every_unparsed_change_is_refused(project, path, change, shown):
    target = project.project_dir / path
    if change is None:
        target.unlink()
    else:
        target.write_text(change if isinstance(change, str) else change(target.read_text(encoding="utf-8")),
                          encoding="utf-8")
        later(target)
    assert shown in refusal(project)


def test_round_four_a_yaml_edit_with_an_old_time_is_refused(project):
    yml = project.project_dir / METRICS_YML
    before = yml.stat().st_mtime
    yml.write_text(yml.read_text(encoding="utf-8").replace("value: avg(delivery_days)", "value: max(delivery_days)"),
                   encoding="utf-8")
    os.utime(yml, (before, before))
    with pytest.raises(DptoolError):
        check_manifest_current(project, project.load_manifest())
