"""The bundles a project's gold models serve: `models/dptool_gold/` holds the models of every bundle generated
from the project, not only the last one.

A gold model is named by its task's content id (dptool.generate.ids), so two bundles asking one question share
its model. The folder's `dptool_bundles.json` lists the bundles its models serve; generate writes the models of
its own bundle and keeps those of each other listed bundle that still exists and was made from this project. A
bundle's models go when it is regenerated without them, or when it is gone. The list holds paths relative to the
project, never this machine's absolute paths (the folder may be tracked, and clones live elsewhere).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from dptool.bundle import read_record
from dptool.errors import DptoolError

REGISTRY = "dptool_bundles.json"


def listed(folder: Path) -> list[str]:
    """The bundle folders the gold models in `folder` serve (none when it has no list)."""
    path = folder / REGISTRY
    try:
        bundles = json.loads(path.read_text(encoding="utf-8")).get("bundles", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [b for b in bundles if isinstance(b, str)]


def served_elsewhere(folder: Path, out: Path, project_dir: Path, project_name: str) -> dict[str, list[str]]:
    """For each other bundle listed in `folder` that still exists and was made from this project: the ids of
    its tasks whose gold model is in this project (bundle folder -> ids)."""
    out = out.resolve()
    served = {}
    for listed_path in listed(folder):
        path = project_dir / listed_path  # relative to the project (an absolute path, as older lists held, stays)
        if path.resolve() == out or not (path / "tasks.jsonl").is_file():
            continue
        try:
            record = read_record(path) or {}
        except DptoolError:
            continue  # not ours to judge: its models go, and the check of that bundle will say so
        made_in = (record.get("project") or {}).get("dir")
        if made_in is not None and Path(made_in).resolve() != project_dir.resolve():
            continue
        prefix = f"model.{project_name}."
        ids = []
        try:
            for line in (path / "tasks.jsonl").read_text(encoding="utf-8").splitlines():
                task = json.loads(line) if line.strip() else {}
                if str(task.get("dbt_node") or "").startswith(prefix):
                    ids.append(task["task_id"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if ids:
            served[str(path)] = ids
    return served


def write_list(folder: Path, bundles: list[str], project_dir: Path) -> None:
    """Write the list of bundles the models in `folder` serve, as paths relative to `project_dir`."""
    relative = {Path(os.path.relpath(Path(b).resolve(), project_dir.resolve())).as_posix() for b in bundles}
    text = json.dumps({"bundles": sorted(relative),
                       "note": "written by `dptool generate`: the bundles whose gold models this folder holds"},
                      indent=2, sort_keys=True) + "\n"
    (folder / REGISTRY).write_text(text, encoding="utf-8")
