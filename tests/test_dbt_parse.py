"""A dbt run's partial parse starts from the manifest the project's last run in this process parsed."""

from __future__ import annotations

from pathlib import Path

import pytest

from dptool.errors import DptoolError
from dptool.project.dbt import DbtProject

PROJECT = """name: parse_reuse
version: "1.0"
config-version: 2
profile: parse_reuse
models:
  parse_reuse:
    +materialized: ephemeral
"""
PROFILE = """parse_reuse:
  target: dev
  outputs:
    dev: {type: duckdb, path: warehouse.duckdb, threads: 1}
"""
FULL_PARSE = "Starting full parse"


@pytest.fixture
def project(tmp_path) -> DbtProject:
    (tmp_path / "dbt_project.yml").write_text(PROJECT, encoding="utf-8")
    (tmp_path / "profiles.yml").write_text(PROFILE, encoding="utf-8")
    models = tmp_path / "models"
    models.mkdir()
    (models / "upstream.sql").write_text("select 1 as x", encoding="utf-8")
    (models / "reader.sql").write_text("select x from {{ ref('upstream') }}", encoding="utf-8")
    return DbtProject(tmp_path)


def compiled(project: DbtProject, *names: str) -> dict[str, str]:
    results = project.run("compile", "--select", *names, "--no-write-json", "--no-populate-cache")
    return {r.name: r.compiled_code for r in results}


def log_of(project: DbtProject, run) -> str:
    """What dbt logged while `run` ran."""
    log = Path(project.project_dir) / "logs" / "dbt.log"
    start = log.stat().st_size if log.is_file() else 0
    run()
    return log.read_bytes()[start:].decode("utf-8", "replace")


def test_a_second_run_does_not_read_the_saved_manifest_back(project):
    project.run("parse")
    saved = project.target_dir / "partial_parse.msgpack"
    saved.unlink()  # a run that reads the manifest back from disk finds none: it parses everything again
    (project.project_dir / "models" / "added.sql").write_text("select x + 1 as y from {{ ref('upstream') }}",
                                                              encoding="utf-8")
    out: dict[str, str] = {}
    log = log_of(project, lambda: out.update(compiled(project, "added")))
    assert FULL_PARSE not in log
    assert "__dbt__cte__upstream" in out["added"]  # the added model is in the manifest, its ephemeral model injected
    assert not saved.exists()  # a manifest from memory is not written back


def test_a_node_compiled_by_one_run_is_compiled_anew_by_the_next(project):
    first = compiled(project, "reader")["reader"]
    assert first == compiled(project, "reader")["reader"]  # its ephemeral model injected again, not skipped
    (project.project_dir / "models" / "upstream.sql").write_text("select 2 as x", encoding="utf-8")
    again = compiled(project, "reader")["reader"]
    assert "select 2 as x" in again and "select 1 as x" not in again


def test_a_parse_that_fails_part_way_leaves_no_manifest_behind(project):
    compiled(project, "reader")
    broken = project.project_dir / "models" / "broken.sql"
    broken.write_text("select {{ ref('upstream') ", encoding="utf-8")
    with pytest.raises(DptoolError, match="broken"):
        compiled(project, "reader")
    broken.unlink()
    log = log_of(project, lambda: compiled(project, "reader"))
    assert FULL_PARSE not in log  # from the saved manifest on disk, the last good state
    assert "__dbt__cte__upstream" in compiled(project, "reader")["reader"]
