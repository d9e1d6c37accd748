"""The support_shop fixture project (tests/fixtures/support_shop), set up as a user would, and the supports of
hand-made candidates on it: their gold and support queries compiled by dbt and run on its DuckDB file."""

from __future__ import annotations

import shutil
from pathlib import Path

from dptool.generate.instantiate import Candidate
from dptool.generate.materialize import Built, materialize
from dptool.generate.sample import Skeleton
from dptool.generate.support import supports
from dptool.project.catalog import Catalog, load_catalog
from dptool.project.dbt import DbtProject
from tests.conftest import run_cli

FIXTURE = Path(__file__).parent / "fixtures" / "support_shop"
IGNORED = shutil.ignore_patterns("target", "dbt_packages", "logs", "*.duckdb", "*.duckdb.wal", "packages.yml",
                                 "package-lock.yml", "__pycache__")
ORDERS = "model.support_shop.orders"


def set_up(root: Path) -> tuple[DbtProject, Catalog]:
    """A copy of the fixture after `dptool init`, `dbt deps` and `dbt build`, with its catalog."""
    shutil.copytree(FIXTURE, root, ignore=IGNORED)
    proc = run_cli("init", "--project-dir", str(root))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    project = DbtProject(root)
    project.run("deps")
    failed = [r.unique_id for r in project.run("build") if r.status not in ("success", "pass")]
    assert not failed, failed
    return project, load_catalog(project.load_manifest())


def candidate(metric: str, analysis_type: str, column: str, task_id: str, where=(), shape="grouped") -> Candidate:
    """A candidate of `metric` by one column of the orders, no rule."""
    skeleton = Skeleton(metric, f"{ORDERS}.{column}", "categorical", (), (ORDERS,))
    return Candidate(skeleton, analysis_type, list(where), [column], shape, None, task_id=task_id)


def support_of(project: DbtProject, catalog: Catalog, candidates: list[Candidate]) -> dict[str, dict]:
    """The support record of each candidate, by task id, as `dptool generate` computes it."""
    built = [b for _, b in materialize(project, candidates, catalog, project.connection())]
    failed = [b for b in built if not isinstance(b, Built)]
    assert not failed, failed
    found = supports(project, built, catalog, project.connection())
    assert all(isinstance(s, dict) for s in found.values()), found
    return found
