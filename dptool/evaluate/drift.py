"""Which of a bundle's `dbt_node`s no longer compute its gold in the project the bundle was made from.

A bundle records (bundle.json) the sha256 of each gold model it wrote and the digests of the nodes and macros
they read (dptool.project.digests). Against the project's manifest as dbt last wrote it, a task's node has
drifted when its model file is gone or was rewritten (another run asked a different computation under that id),
or when a node under its metric, a rule macro it applies or the dptool package changed. Nothing is compiled.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from dptool.bundle import read_record
from dptool.project.digests import changed, upstream

GOLD_DIR = Path("models") / "dptool_gold"  # where generate writes the gold models (dptool.generate.materialize)


def stale_nodes(bundle: str | Path, tasks: list[dict]) -> tuple[Path | None, list[tuple[str, str]]]:
    """(the project checked, [(task id, why its dbt_node drifted)]); (None, []) when the bundle records no project
    or the project is not on this machine."""
    record = read_record(bundle) or {}
    dbt = record.get("dbt") or {}
    project = Path(((record.get("project") or {}).get("dir")) or "")
    manifest_path = project / "target" / "manifest.json"
    if not dbt or not record.get("project") or not manifest_path.is_file():
        return None, []
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, []
    reads = dbt.get("reads") or {}
    nodes, macros, package = changed(reads, manifest)
    metric_nodes = dbt.get("metrics") or {}
    models = dbt.get("models") or {}
    metric_uids = {}
    stale = []
    for task in tasks:
        node = task.get("dbt_node") or ""
        if not node.startswith("model.") or task["task_id"] not in models:
            continue
        why = _model_drift(project, node, models[task["task_id"]])
        if why is None:
            under = set()
            for m in task["metric_ids"]:
                uid = metric_nodes.get(m)
                if uid and uid not in metric_uids:
                    metric_uids[uid] = upstream(manifest, [uid])
                under |= metric_uids.get(uid, set())
            moved = sorted(under & nodes)
            rules = sorted(m for m in macros if m.rsplit(".", 1)[-1].removeprefix("rule__") in _rules(task))
            if moved:
                why = f"{moved[0]} changed" + (f" (and {len(moved) - 1} more nodes under its metric)"
                                               if len(moved) > 1 else "")
            elif rules:
                why = f"rule macro {rules[0]} changed"
            elif package:
                why = "the dptool dbt package changed"
        if why:
            stale.append((task["task_id"], why))
    return project, stale


def _model_drift(project: Path, node: str, sha: str) -> str | None:
    path = project / GOLD_DIR / f"{node.rsplit('.', 1)[-1]}.sql"
    try:
        text = path.read_bytes()
    except OSError:
        return f"its gold model {path.name} is gone"
    if hashlib.sha256(text).hexdigest() != sha:
        return f"its gold model {path.name} was rewritten by a later `dptool generate`"
    return None


def _rules(task: dict) -> set[str]:
    spec = task.get("spec") or {}
    return {*task["rule_ids"], *(task.get("rules_in_force") or []), *(spec.get("base_rules") or [])}
