"""The README's quickstart, run command by command as a user types it, on a copy of the subscriptions fixture."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests import readme
from tests.subscriptions import GENERATE_ARGS, copy_fixture

QUICKSTART = re.compile(r"<!-- quickstart -->\n```sh\n(?P<body>.*?)\n```\n<!-- /quickstart -->", re.DOTALL)


def quickstart_commands() -> list[list[str]]:
    """The commands of the README's quickstart block, each split as a shell would, its comment dropped."""
    found = QUICKSTART.search(readme.README.read_text(encoding="utf-8"))
    assert found, "README.md has no <!-- quickstart --> block"
    return [shlex.split(line, comments=True) for line in found.group("body").splitlines() if line.strip()]


def test_the_quickstart_is_the_workflow_in_order():
    programs = [" ".join(c[:2]) for c in quickstart_commands()]
    assert programs == ["dptool init", "dbt deps", "dbt build", "dptool generate", "dptool answer", "dptool score"]


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> Path:
    root = copy_fixture(tmp_path_factory.mktemp("quickstart") / "subscriptions")
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "False", "DO_NOT_TRACK": "1"}
    for command in quickstart_commands():
        program, *args = command
        if program == "dptool":
            if args[0] == "generate":  # the fixture keeps its rule documents in business_rules/, and a small target
                args = [*args, *GENERATE_ARGS]
            argv = [sys.executable, "-m", "dptool.cli", *args]
        else:
            argv = [str(Path(sys.executable).parent / program), *args]
        proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=900, env=env)
        assert proc.returncode == 0, f"{' '.join(command)}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    return root


def test_the_quickstart_runs_and_scores_the_reference_agent(ran):
    score = (ran / "score" / "score.md").read_text(encoding="utf-8")
    assert "Accuracy 100.0 %" in score
    assert (ran / "bundle" / "warehouse.duckdb").is_file()
    assert (ran / "score" / "report.html").is_file()


def test_the_project_still_parses_after_the_quickstart(ran, tmp_path):
    from dptool.project.dbt import DbtProject

    project = DbtProject(ran)
    for gold in (False, True):  # the gold models disabled, as in the user's runs, and enabled
        project.run("parse", "--target-path", str(tmp_path / f"parse-{gold}"), gold=gold)
