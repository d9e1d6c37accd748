"""Shared fixtures: a throw-away copy of the demo project, built by dbt once per test session."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dptool.project.catalog import load_catalog
from dptool.project.dbt import DbtProject

REPO = Path(__file__).resolve().parent.parent

# What a developer's shell may hold that changes what dptool or dbt does in a test: the model ($DPTOOL_LLM,
# $DPTOOL_EMBED_MODEL, any other DPTOOL_*), the Ollama server, another profiles.yml or target. They are taken out
# of this process's environment before any test runs, so the tests, in-process and `run_cli`'s subprocesses alike,
# see only what a test sets itself (monkeypatch.setenv, or run_cli(env=...)). The harness's own settings stay:
# the PostgreSQL server CI starts (DPTOOL_PG_*, DPTOOL_REQUIRE_POSTGRES), DPTOOL_REQUIRE_SPARK,
# DPTOOL_REQUIRE_CHROMIUM, DPTOOL_REQUIRE_DBT (make test-dbt112) and the dbt package's integration tests.
LEAKY_ENV = ("OLLAMA_HOST", "DBT_PROFILES_DIR", "DBT_PROFILE", "DBT_TARGET", "DBT_PROJECT_DIR")
HARNESS_ENV = ("DPTOOL_PG_", "DPTOOL_REQUIRE_POSTGRES", "DPTOOL_REQUIRE_SPARK", "DPTOOL_REQUIRE_CHROMIUM",
               "DPTOOL_REQUIRE_DBT", "DPTOOL_IT_")


def leaky(name: str) -> bool:
    return name in LEAKY_ENV or (name.startswith("DPTOOL_") and not name.startswith(HARNESS_ENV))


def clean_environment(environ) -> dict[str, str]:
    """The environment without what a developer's shell may have set for dptool (see LEAKY_ENV)."""
    return {k: v for k, v in environ.items() if not leaky(k)}


for _name in [n for n in os.environ if leaky(n)]:
    del os.environ[_name]
DEMO_PARTS = ("dbt_project.yml", "packages.yml", "profiles.yml", "selectors.yml", "macros", "models", "seeds",
              "tests/dbt", "dptool/dbt_package")
IGNORED = shutil.ignore_patterns("target", "dbt_packages", "logs", "*.duckdb", "*.duckdb.wal", "dptool_gold",
                                 "integration_tests", "__pycache__")


def copy_demo_project(dest: Path) -> Path:
    """The demo dbt project as a user would have it, without anything built or generated."""
    for part in DEMO_PARTS:
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=IGNORED)
        elif src.is_file():
            (dest / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / part)
    return dest


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the groups
def pytest_collection_modifyitems(config, items):
    # `make test` runs the suite on two pytest-xdist workers (--dist loadgroup). A module's tests stay on one worker
    # (its module-scoped fixtures build a project once), and every module that reads the generated demo bundle on the
    # same one: the bundle costs minutes, and each worker would generate its own
    readers = {item.nodeid.split("::")[0] for item in items if "demo_bundle" in getattr(item, "fixturenames", ())}
    for item in items:
        module = item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group("demo_bundle" if module in readers else module))


@pytest.fixture(scope="session")
def _built_demo(tmp_path_factory) -> tuple[DbtProject, dict]:
    root = copy_demo_project(tmp_path_factory.mktemp("demo") / "project")
    project = DbtProject(root)
    project.run("deps")
    results = project.run("build")
    failed = [r.unique_id for r in results if r.status not in ("success", "pass")]
    assert not failed, f"dbt build of the demo project failed: {failed}"
    # kept now: a later `dptool generate` rewrites target/manifest.json
    return project, json.loads(project.manifest_path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def demo_project(_built_demo) -> DbtProject:
    """The demo project, copied to a temp folder, with `dbt deps` and `dbt build` run once."""
    return _built_demo[0]


@pytest.fixture(scope="session")
def demo_manifest(_built_demo) -> dict:
    """The manifest of that `dbt build` (read-only: deep-copy before editing)."""
    return _built_demo[1]


@pytest.fixture(scope="session")
def demo_catalog(demo_manifest):
    return load_catalog(demo_manifest)


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The dptool command as a user runs it: a new process, with this process's environment (clean of a
    developer's settings: see LEAKY_ENV) and `env` on top."""
    return subprocess.run([sys.executable, "-m", "dptool.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env={**os.environ, **env} if env else None)


@pytest.fixture(scope="session")
def demo_bundle(demo_project, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """`dptool generate` run end to end on the built demo project, from the command line."""
    out = tmp_path_factory.mktemp("bundle") / "bundle"
    proc = run_cli("generate", "--project-dir", str(demo_project.project_dir), "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    # the project still parses after generate, its gold models enabled or not (into a target of its own: the tests
    # read the manifest generate left)
    for gold in (False, True):
        demo_project.run("parse", "--target-path", str(tmp_path_factory.mktemp("parse")), gold=gold)
    return out, proc


@pytest.fixture
def ollama_server():
    """A real Ollama-speaking HTTP server on loopback with scripted replies (see tests/ollama_server.py)."""
    from tests.ollama_server import OllamaServer

    with OllamaServer() as server:
        yield server


@pytest.fixture(scope="session")
def built_demo_copy(demo_project, tmp_path_factory) -> DbtProject:
    """Another copy of the built demo project (data, target/, dbt_packages/) for tests whose dbt runs and
    `dptool generate` must not change the shared `demo_project`; no dbt build needed."""
    return copy_built_project(demo_project, tmp_path_factory.mktemp("demo_copy") / "project")


def copy_built_project(project: DbtProject, dest: Path) -> DbtProject:
    """A copy of a built project (data, target/, dbt_packages/) whose dbt runs and dptool commands leave `project`
    as it was; no dbt build needed."""
    shutil.copytree(project.project_dir, dest, symlinks=True,
                    ignore=shutil.ignore_patterns("logs", "dptool_gold", "dptool_ablation", "__pycache__"))
    return DbtProject(dest)
