"""The dbt versions dptool is tested on: `make test` on dbt-core 1.11, `make test-dbt112` on 1.12 (its own venv).

What pip decides when dptool is installed beside a dbt the user already has is whether dptool's requirements accept
that dbt: these tests read them from the installed dptool's metadata and hold them against what is installed, so a
pin that would downgrade dbt-core 1.12 fails here (and in `pip check`, which the 1.12 venv's installer runs too).
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import requires, version
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.version import Version

PACKAGE = Path(__file__).resolve().parents[1] / "dptool" / "dbt_package" / "dbt_project.yml"


def test_dptool_requirements_accept_the_installed_dbt():
    """pip keeps an installed dbt-core (and adapter) that dptool's requirements accept: these must accept it."""
    declared = {Requirement(r).name: Requirement(r) for r in requires("dbt-dptool") or [] if "extra ==" not in r}
    for name in ("dbt-core", "dbt-duckdb"):
        installed = version(name)
        assert declared[name].specifier.contains(installed, prereleases=True), (name, installed, declared[name])


def test_the_dbt_package_accepts_the_installed_dbt():
    """`dbt deps` refuses a dbt the dptool dbt package's require-dbt-version does not name."""
    bounds = yaml.safe_load(PACKAGE.read_text(encoding="utf-8"))["require-dbt-version"]
    installed = Version(version("dbt-core"))
    for bound in bounds:
        assert Requirement(f"dbt-core{bound}").specifier.contains(installed), (bound, installed)


def test_pip_check_names_nothing_of_dptool():
    """pip's own check of the installed requirements: nothing about dptool or its dbt (the 1.12 venv lacks only
    dbt-core-experimental-parser, which dbt-core calls only under --use-v2-parser)."""
    proc = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True, timeout=120)
    lines = [line for line in proc.stdout.splitlines() if line.strip() and "No broken requirements" not in line]
    assert all(line.startswith("dbt-core ") and "dbt-core-experimental-parser" in line for line in lines), proc.stdout


def test_the_required_dbt_version_is_the_one_running():
    """`make test-dbt112` sets DPTOOL_REQUIRE_DBT=1.12: its tests must not run on another dbt by mistake."""
    wanted = os.environ.get("DPTOOL_REQUIRE_DBT")
    installed = version("dbt-core")
    if wanted:
        assert installed.startswith(wanted + "."), f"DPTOOL_REQUIRE_DBT={wanted} and dbt-core {installed} installed"
    else:  # `make test`: what `pip install -e .[dev,fast]` resolves here
        assert Version(installed) < Version("1.12"), installed
