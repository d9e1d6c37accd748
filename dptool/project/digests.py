"""Digests of what a gold model computes from: the dbt nodes under its metric and the macros it applies.

Generate records them in the bundle (bundle.json); `dptool score` and `answer` compare them with the project's
manifest as dbt last wrote it, to say which of a bundle's `dbt_node`s no longer compute its gold (a rule macro
edited, a metric's `value` changed, the model rewritten by another run).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

PACKAGE = "macro.dptool."  # the dptool dbt package's macros: dptool.gold and what it calls


def _sha(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def node_digest(node: dict | None) -> str | None:
    """What in a node changes what it computes: its code or file, its meta and its columns' (None: no node)."""
    if node is None:
        return None
    config = node.get("config") or {}
    return _sha({
        "code": node.get("raw_code"),
        "file": (node.get("checksum") or {}).get("checksum") if node.get("resource_type") == "seed" else None,
        "relation": [node.get(k) for k in ("database", "schema", "identifier", "alias")],
        "materialized": config.get("materialized"),
        "meta": [node.get("meta"), config.get("meta")],
        "columns": {name: (col or {}).get("meta") for name, col in sorted((node.get("columns") or {}).items())},
    })


def macro_digest(macro: dict | None) -> str | None:
    """A macro's SQL and meta (a rule's `modifies` and `applies_when` are in its meta)."""
    if macro is None:
        return None
    return _sha({"sql": macro.get("macro_sql"), "meta": macro.get("meta")})


def package_digest(manifest: dict) -> str:
    """One digest of every macro of the dptool dbt package."""
    macros = manifest.get("macros") or {}
    return _sha({uid: macro_digest(m) for uid, m in sorted(macros.items()) if uid.startswith(PACKAGE)})


def _node(manifest: dict, uid: str) -> dict | None:
    return (manifest.get("nodes") or {}).get(uid) or (manifest.get("sources") or {}).get(uid)


def upstream(manifest: dict, uids: Iterable[str]) -> set[str]:
    """The nodes given and every node they depend on, transitively (sources and seeds included)."""
    seen: set[str] = set()
    todo = list(uids)
    while todo:
        uid = todo.pop()
        if uid in seen:
            continue
        seen.add(uid)
        node = _node(manifest, uid)
        if node is not None:
            todo += (node.get("depends_on") or {}).get("nodes") or []
    return seen


def snapshot(manifest: dict, node_uids: Iterable[str], macro_uids: Iterable[str]) -> dict:
    """The digests of the given nodes (with everything upstream), macros and the dptool package."""
    macros = manifest.get("macros") or {}
    return {
        "nodes": {uid: node_digest(_node(manifest, uid)) for uid in sorted(upstream(manifest, node_uids))},
        "macros": {uid: macro_digest(macros.get(uid)) for uid in sorted(set(macro_uids))},
        "package": package_digest(manifest),
    }


def changed(recorded: dict, manifest: dict) -> tuple[set[str], set[str], bool]:
    """The nodes and macros of a `snapshot` whose digest differs in `manifest`, and whether the package does."""
    macros = manifest.get("macros") or {}
    nodes = {uid for uid, d in (recorded.get("nodes") or {}).items() if node_digest(_node(manifest, uid)) != d}
    changed_macros = {uid for uid, d in (recorded.get("macros") or {}).items() if macro_digest(macros.get(uid)) != d}
    return nodes, changed_macros, recorded.get("package") not in (None, package_digest(manifest))
