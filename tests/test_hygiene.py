"""The test suite's own hygiene: a developer's environment does not reach the tests, and the tests write only
into temporary folders."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO, clean_environment, run_cli

SAMPLE = REPO / "tests" / "fixtures" / "judge" / "sample.jsonl"
NO_LLM = "needs an LLM: pass --llm ollama:NAME"
DEAD = "http://127.0.0.1:9"  # nothing listens on the discard port


def test_clean_environment_drops_a_developer_s_dptool_and_ollama_settings():
    environ = {"DPTOOL_LLM": "ollama:mine", "DPTOOL_EMBED_MODEL": "ollama:embed", "DPTOOL_ANYTHING": "1",
               "OLLAMA_HOST": "http://gpu:11434", "DBT_PROFILES_DIR": "/home/me/.dbt", "DBT_TARGET": "prod",
               "DPTOOL_PG_PORT": "5433", "DPTOOL_REQUIRE_POSTGRES": "1", "DPTOOL_IT_DUCKDB": "/tmp/it.duckdb",
               "DPTOOL_REQUIRE_SPARK": "1", "PATH": "/usr/bin", "HOME": "/home/me"}
    assert clean_environment(environ) == {"DPTOOL_PG_PORT": "5433", "DPTOOL_REQUIRE_POSTGRES": "1",
                                          "DPTOOL_IT_DUCKDB": "/tmp/it.duckdb", "DPTOOL_REQUIRE_SPARK": "1",
                                          "PATH": "/usr/bin", "HOME": "/home/me"}


def test_a_developer_s_model_does_not_reach_the_cli_tests(tmp_path):
    # a test session started from a shell that names a model and a server: its tests see neither
    probe = tmp_path / "test_probe.py"
    probe.write_text(f'''
import os
from pathlib import Path

from dptool.llm.client import resolve_spec
from tests.conftest import run_cli


def test_probe(tmp_path):
    assert "DPTOOL_LLM" not in os.environ and "OLLAMA_HOST" not in os.environ
    assert resolve_spec(None, tmp_path) == (None, "")
    proc = run_cli("judge-agreement", {str(SAMPLE)!r}, "--project-dir", str(tmp_path))
    assert {NO_LLM!r} in proc.stderr, proc.stderr
''', encoding="utf-8")
    env = {**os.environ, "DPTOOL_LLM": "ollama:leaked", "OLLAMA_HOST": DEAD, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
                           "--basetemp", str(tmp_path / "tmp"), str(probe)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_test_that_sets_the_model_reaches_the_cli(tmp_path, monkeypatch):
    args = ("judge-agreement", str(SAMPLE), "--project-dir", str(tmp_path))
    assert NO_LLM in run_cli(*args).stderr
    proc = run_cli(*args, env={"DPTOOL_LLM": "ollama:set-here", "OLLAMA_HOST": DEAD})
    assert f"cannot reach ollama at {DEAD}" in proc.stderr, proc.stderr
    monkeypatch.setenv("DPTOOL_LLM", "ollama:set-here")
    monkeypatch.setenv("OLLAMA_HOST", DEAD)
    assert f"cannot reach ollama at {DEAD}" in run_cli(*args).stderr
    assert not (tmp_path / "target").exists()  # no reply, nothing cached
