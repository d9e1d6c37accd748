"""Install dptool into a venv beside dbt-core 1.12, as `make test-dbt112` runs it (python tests/dbt112_venv.py VENV).

dbt-core 1.12 requires dbt-core-experimental-parser, whose build downloads a binary from outside the package
registry (it is called only under `--use-v2-parser`); this machine reaches only the registry. So dbt-core's wheel
goes in without its dependencies, and every other requirement its METADATA lists goes in as usual; the adapters
(their own requirement on dbt-core would pull the parser in) and dptool itself go in without dependencies, and
their other requirements as usual. `pip check` must then name the parser alone: dptool's own `dbt-core` and
`dbt-duckdb` requirements accept what is installed, i.e. `pip install dbt-dptool` keeps dbt-core 1.12.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parent.parent
DBT_CORE = "dbt-core==1.12.*"
PARSER = "dbt-core-experimental-parser"
# what pulls dbt-core in through its own requirements: installed without dependencies
NO_DEPS = ("dbt-core", "dbt-duckdb", "dbt-postgres")
EXTRAS = ("dev", "fast", "metricflow")


def main(venv: Path) -> None:
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "--quiet", "--disable-pip-version-check"]
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [Requirement(r) for r in project["dependencies"]]
    for extra in EXTRAS:
        wanted += [Requirement(r) for r in project["optional-dependencies"].get(extra, [])]
    # dbt-core 1.12 in place of the dev extra's cap (the 1.11 of `make test`); the adapters as dptool pins them
    bare = [DBT_CORE, *sorted({str(r) for r in wanted if r.name in NO_DEPS and r.name != "dbt-core"})]
    plain = {str(r) for r in wanted if r.name not in NO_DEPS}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([*pip, "download", "--no-deps", "--dest", tmp, *bare], check=True)
        wheels = sorted(str(w) for w in Path(tmp).glob("*.whl"))
        for wheel in wheels:  # what the bare packages need besides each other (and the parser)
            plain |= set(_requirements(Path(wheel)))
        subprocess.run([*pip, "install", *sorted(plain)], check=True)
        subprocess.run([*pip, "install", "--no-deps", *wheels, "-e", str(REPO)], check=True)
    check = subprocess.run([python, "-m", "pip", "check"], capture_output=True, text=True)
    problems = [line for line in check.stdout.splitlines() if line.strip() and PARSER not in line]
    if problems or PARSER not in check.stdout:
        sys.exit("pip check of the dbt-core 1.12 venv: expected only the missing " + PARSER + ", got:\n"
                 + check.stdout + check.stderr)
    version = subprocess.run([python, "-c", "from dbt.version import __version__ as v; print(v)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    if not version.startswith("1.12."):
        sys.exit(f"the dbt-core 1.12 venv holds dbt-core {version}")
    print(f"dbt-core {version} beside dptool in {venv}; pip check: only {PARSER} missing (used under "
          "--use-v2-parser alone)")


def _requirements(wheel: Path) -> list[str]:
    """A wheel's requirements from its METADATA, without extras, the parser and the packages installed bare."""
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        lines = z.read(name).decode("utf-8").splitlines()
    out = []
    for line in lines:
        if not line.startswith("Requires-Dist:"):
            continue
        req = Requirement(line.removeprefix("Requires-Dist:").strip())
        if req.name == PARSER or req.name in NO_DEPS or (req.marker is not None and "extra" in str(req.marker)):
            continue
        if req.marker is None or req.marker.evaluate():
            out.append(str(req))
    return out


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
