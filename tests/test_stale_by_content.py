"""A manifest is stale when a file's text differs from the one dbt parsed, whatever the file's time: YAML
properties, macros and docs blocks are compared with the checksums of dbt's partial-parse state.

On a two-file dbt project parsed by dbt itself (no build, no data)."""

from __future__ import annotations

import os
import time

import pytest

from dptool.errors import DptoolError
from dptool.project.dbt import DbtProject
from dptool.project.prepare import check_manifest_current

PROPS = "models/_props.yml"


@pytest.fixture
def project(tmp_path) -> DbtProject:
    root = tmp_path / "p"
    (root / "models").mkdir(parents=True)
    (root / "macros").mkdir()
    (root / "dbt_project.yml").write_text("name: tiny\nversion: '1.0'\nconfig-version: 2\nprofile: tiny\n",
                                          encoding="utf-8")
    (root / "profiles.yml").write_text("tiny:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
                                       "      path: tiny.duckdb\n", encoding="utf-8")
    (root / "models" / "orders.sql").write_text("select 1 as order_id, 2.5 as amount\n", encoding="utf-8")
    (root / PROPS).write_text("version: 2\nmodels:\n  - name: orders\n    description: One row per order.\n",
                              encoding="utf-8")
    (root / "macros" / "cents.sql").write_text("{% macro cents(x) %}{{ x }} * 100{% endmacro %}\n",
                                               encoding="utf-8")
    for path in root.rglob("*.*"):  # written well before the parse
        os.utime(path, (time.time() - 3600,) * 2)
    project = DbtProject(root)
    project.run("parse")
    return project


def edit_keeping_time(path, old: str, new: str) -> None:
    """An edit that keeps the file's time (cp -p, a tar, a checkout of an old time)."""
    before = path.stat()
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def refusal(project: DbtProject) -> str:
    with pytest.raises(DptoolError) as info:
        check_manifest_current(project, project.load_manifest())
    return str(info.value)


def test_a_yaml_edit_with_its_old_time_is_refused_in_one_line(project):
    check_manifest_current(project, project.load_manifest())
    edit_keeping_time(project.project_dir / PROPS, "One row per order.", "One row per order line.")
    assert refusal(project) == (
        f"{project.manifest_path}: older than {PROPS} (its text is not the one dbt parsed, its time older than the "
        f"parse); run `dbt parse --no-partial-parse` (or `dbt build --no-partial-parse`) in {project.project_dir} "
        f"first")


def test_a_macro_edit_with_its_old_time_is_refused(project):
    edit_keeping_time(project.project_dir / "macros" / "cents.sql", "* 100", "* 1000")
    assert "older than macros/cents.sql (its text is not the one dbt parsed" in refusal(project)


def test_the_advised_full_parse_makes_it_current(project):
    edit_keeping_time(project.project_dir / PROPS, "One row per order.", "One row per order line.")
    project.run("parse", "--no-partial-parse")
    check_manifest_current(project, project.load_manifest())


def test_a_touched_yaml_file_with_the_same_text_is_current(project):
    os.utime(project.project_dir / PROPS, (time.time() + 60,) * 2)  # a checkout: a new time, the same text
    check_manifest_current(project, project.load_manifest())


def test_another_parse_state_falls_back_on_times(project):
    # a state newer than manifest.json is another parse's (`--no-write-json`): times decide, as without one
    state = project.target_dir / "partial_parse.msgpack"
    os.utime(state, (time.time() + 120,) * 2)
    edit_keeping_time(project.project_dir / PROPS, "One row per order.", "One row per order line.")
    check_manifest_current(project, project.load_manifest())
    os.utime(project.project_dir / PROPS, (time.time() + 60,) * 2)
    assert f"older than {PROPS} (changed since dbt parsed the project)" in refusal(project)
