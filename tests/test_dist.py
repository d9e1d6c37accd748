"""The distribution as a user installs it: `make dist` builds the wheel and the sdist, the wheel goes into a fresh
venv (not editable), and that venv's dptool sets up, builds and generates a copy of the subscriptions fixture.

The venv takes its dependencies (dbt, DuckDB, ...) from this interpreter's site-packages through a .pth file, so
that nothing is downloaded; dptool itself is only the wheel's, under the venv's own site-packages (checked).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import yaml

from dptool import __version__
from tests.subscriptions import GENERATE_ARGS, copy_fixture

REPO = Path(__file__).resolve().parent.parent
DBT = "import sys; from dbt.cli.main import cli; sys.argv[0] = 'dbt'; sys.exit(cli())"


def _run(args: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{args}: {proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    return proc


def test_the_wheel_installs_and_runs_a_project_from_site_packages(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    dist = tmp_path / "dist"
    _run(["make", "-C", str(REPO), "dist", f"DIST={dist}", f"DIST_VENV={tmp_path / 'dist-venv'}",
          f"PYTHON={sys.executable}"], env)
    wheel = dist / f"dbt_dptool-{__version__}-py3-none-any.whl"
    sdist = dist / f"dbt_dptool-{__version__}.tar.gz"
    assert sorted(p.name for p in dist.iterdir()) == sorted([wheel.name, sdist.name])
    names = zipfile.ZipFile(wheel).namelist()
    assert "dptool/dbt_package/dbt_project.yml" in names and "dptool/dbt_package/macros/metric_spec.sql" in names
    metadata = zipfile.ZipFile(wheel).read(f"dbt_dptool-{__version__}.dist-info/METADATA").decode()
    assert "Name: dbt-dptool" in metadata.splitlines()
    with tarfile.open(sdist) as tar:
        assert f"dbt_dptool-{__version__}/dptool/dbt_package/dbt_project.yml" in tar.getnames()

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], env)
    python = venv / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     env).stdout.strip())
    (site / "shared_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    _run([str(python), "-m", "pip", "install", "--quiet", "--no-index", "--disable-pip-version-check", str(wheel)],
         env)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    where = _run([str(python), "-c", "import dptool; print(dptool.__file__)"], env, cwd=tmp_path).stdout.strip()
    assert Path(where) == site / "dptool" / "__init__.py"  # the wheel's, not this checkout's

    root = copy_fixture(tmp_path / "project")
    _run([str(venv / "bin" / "dptool"), "init", "--project-dir", str(root)], env)
    (entry,) = yaml.safe_load((root / "packages.yml").read_text(encoding="utf-8"))["packages"]
    assert not Path(entry["local"]).is_absolute()
    assert (root / entry["local"]).resolve() == (site / "dptool" / "dbt_package").resolve()
    for command in ("deps", "build"):
        _run([str(python), "-c", DBT, command, "--project-dir", str(root), "--profiles-dir", str(root)], env, cwd=root)
    assert (root / "dbt_packages" / "dptool" / "macros" / "metric_spec.sql").is_file()
    out = root / "bundle"
    _run([str(venv / "bin" / "dptool"), "generate", "--project-dir", str(root), "--out", str(out), *GENERATE_ARGS],
         env)
    assert (out / "tasks.jsonl").read_text(encoding="utf-8").count("\n") >= 8
    # the list of bundles beside the gold models names them relative to the project, not by this machine's path
    listed = json.loads((root / "models" / "dptool_gold" / "dptool_bundles.json").read_text(encoding="utf-8"))
    assert listed["bundles"] == ["bundle"]
    # the user's project still parses with the models generate wrote
    _run([str(python), "-c", DBT, "parse", "--project-dir", str(root), "--profiles-dir", str(root)], env, cwd=root)
