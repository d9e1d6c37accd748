"""The catalog-level rule proofs of the last `dbt build`, read back: the rules that change nothing on this data.

A project proves each declared rule -> metric link with a model of the metric's value without rules and
under each rule (`dptool.metric_variants`) and the test `dptool.rule_changes_answer` on it. On data where a
rule has nothing to change (Berka's real `trans` sample holds three weeks of 1993: a 1996 fee change finds no
row), the test warns: a finding about the data, not a broken build. `dptool generate` runs each such test's
compiled SQL (as `dbt build` compiled it into target/manifest.json) on the built warehouse and lists the
links it finds unchanged in the card. Nothing is built and nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dptool.errors import DptoolError
from dptool.project.catalog import Catalog
from dptool.project.warehouse import Warehouse

TEST = ("dptool", "rule_changes_answer")


@dataclass
class ProofFindings:
    """What the proofs say: (rule, metric) links that change nothing, and proofs that could not be read."""

    unchanged: list[tuple[str, str]] = field(default_factory=list)
    proofs: int = 0  # catalog-level proofs read
    unread: list[str] = field(default_factory=list)  # one line each: which proof, and why


def read_proofs(manifest: dict, catalog: Catalog, warehouse: Warehouse) -> ProofFindings:
    """Run every catalog-level `dptool.rule_changes_answer` test of the manifest; see the module docstring."""
    nodes = manifest.get("nodes", {})
    found = ProofFindings()
    unchanged = set()
    for uid, node in sorted(nodes.items()):
        meta = node.get("test_metadata") or {}
        if node.get("resource_type") != "test" or (meta.get("namespace"), meta.get("name")) != TEST:
            continue
        model = nodes.get(node.get("attached_node") or "", {})
        if "dptool_gold/" in (model.get("original_file_path") or ""):
            continue  # a task's gold model: generate checks its rows itself
        sql = node.get("compiled_code")
        if not sql:
            found.unread.append(f"{uid}: no compiled SQL in target/manifest.json (run `dbt build`)")
            continue
        try:
            columns, rows = warehouse.query(sql)
        except DptoolError as exc:
            found.unread.append(f"{uid}: {exc}")
            continue
        found.proofs += 1
        metrics = [nodes[d]["name"] for d in model.get("depends_on", {}).get("nodes", [])
                   if d in nodes and nodes[d].get("name") in catalog.metrics]
        index = columns.index("dptool_variant") if "dptool_variant" in columns else 0
        for row in rows:
            rule = catalog.rules.get(str(row[index]))
            if rule is None:
                continue
            unchanged |= {(rule.id, m) for m in metrics if m in rule.modifies}
    found.unchanged = sorted(unchanged)
    return found
