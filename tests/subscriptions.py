"""The subscriptions fixture project (tests/fixtures/subscriptions): copy it, set it up as a user would.

A B2B SaaS company's dbt repo whose metrics are declared in the dbt semantic layer; nothing in it is
shaped around the demo. Tests copy it to a temp folder, run `dptool init` (the CLI), `dbt deps` and
`dbt build` (through DbtProject), then `dptool generate` (the CLI).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from dptool.project.dbt import DbtProject

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "subscriptions"
IGNORED = shutil.ignore_patterns("target", "dbt_packages", "logs", "*.duckdb", "*.duckdb.wal", "dptool_gold",
                                 "dptool_semantic", "packages.yml", "package-lock.yml", "bundle", "__pycache__")
# a small benchmark: the coverage pass still gives every metric and rule a skeleton
GENERATE_ARGS = ("--rules-dir", "business_rules", "--target", "8", "--min-per-type", "0")


def copy_fixture(dest: Path) -> Path:
    """The fixture project as its owners have it: no dptool package, nothing built or generated."""
    shutil.copytree(FIXTURE, dest, ignore=IGNORED)
    return dest


def cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The dptool command as a user runs it: a new process."""
    return subprocess.run([sys.executable, "-m", "dptool.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env={**os.environ, **(env or {})})


def set_up(root: Path, target: str | None = None) -> DbtProject:
    """`dptool init`, `dbt deps` and `dbt build` in a copy of the fixture; fails the test if any step does."""
    proc = cli("init", "--project-dir", str(root))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    project = DbtProject(root, target=target)
    project.run("deps")
    results = project.run("build")
    failed = [f"{r.unique_id}: {r.message}" for r in results if r.status not in ("success", "pass")]
    assert not failed, failed
    return project


def relation_sql(model_sql: str, manifest: dict) -> str:
    """A generated semantic-layer model as plain SQL: its config dropped, each ref replaced by its relation."""
    import re

    relations = {n["name"]: n["relation_name"] for n in manifest["nodes"].values() if n.get("relation_name")}
    sql = re.sub(r"\{\{\s*config\(.*?\)\s*\}\}", "", model_sql)
    return re.sub(r"\{\{\s*ref\('([^']+)'\)\s*\}\}", lambda m: relations[m.group(1)], sql)


def metric_sql(name: str, layer, folder: Path, manifest: dict, where: tuple[str, ...] = ()) -> str:
    """The overall value of a generated semantic-layer metric as one query, written here apart from dptool's macros:
    a simple metric's aggregate over its model; a ratio's or derived metric's expression over its inputs, each input
    computed on its own, under its own filter (and the caller's)."""
    decl = layer.metrics[name].decl
    if not decl.get("components"):
        model = relation_sql((folder / f"{name}.sql").read_text(encoding="utf-8"), manifest)
        condition = " where " + " and ".join(f"({w})" for w in where) if where else ""
        return f"select {decl['value']} as value from ({model}) as m{condition}"
    inputs = []
    for item in decl["components"]:
        item = {"metric": item} if isinstance(item, str) else item
        sub = metric_sql(item["metric"], layer, folder, manifest, (*where, *item.get("where", [])))
        alias = item.get("alias") or item["metric"]
        inputs.append(f"(select cast(value as double precision) from ({sub}) as v) as {alias}")
    return f"select {decl['value']} as value from (select {', '.join(inputs)}) as i"
