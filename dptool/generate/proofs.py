"""The catalog-level rule proofs of the last `dbt build`, read back: the rules that change nothing on this data.

A project proves each declared rule -> metric link with a model of the metric's value without rules and
under each rule (`dptool.metric_variants`) and the test `dptool.rule_changes_answer` on it. On data where a
rule has nothing to change (Berka's real `trans` sample holds three weeks of 1993: a 1996 fee change finds no
row), the test warns: a finding about the data, not a broken build. `dptool generate` reads each proof
model's rows as `dbt build` left them and applies the test's check to them (`materialize.rows_differ`, the
check generate applies to every gold model), so the card can list the links that change nothing. Nothing is
built, compiled or written: the manifest gives the proofs and their relations even after a `dbt parse`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dptool.errors import DptoolError
from dptool.generate.materialize import rows_differ
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
    """Check every catalog-level `dptool.rule_changes_answer` test of the manifest; see the module docstring."""
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
        kwargs = meta.get("kwargs") or {}
        column, base = kwargs.get("variant_column", "variant"), kwargs.get("base_variant", "base")
        try:
            columns, rows = warehouse.query(f"select * from {model['relation_name']}")
            index = [c.lower() for c in columns].index(column.lower())
        except (DptoolError, KeyError, TypeError, ValueError) as exc:
            found.unread.append(f"{uid}: {exc}" if str(exc) else f"{uid}: no relation {column!r} to read")
            continue
        found.proofs += 1
        named = ["variant" if i == index else c for i, c in enumerate(columns)]
        variants = kwargs.get("variants") or sorted({r[index] for r in rows if r[index] != base})
        metrics = [nodes[d]["name"] for d in model.get("depends_on", {}).get("nodes", [])
                   if d in nodes and nodes[d].get("name") in catalog.metrics]
        for variant in variants:
            # the test's check, as rows_differ applies it: this variant's rows against the base's
            pair = [(*r[:index], "gold" if r[index] == variant else "base", *r[index + 1:]) for r in rows
                    if r[index] in (base, variant)]
            rule = catalog.rules.get(str(variant))
            if rule is not None and not rows_differ(named, pair, kwargs.get("precision", 9)):
                unchanged |= {(rule.id, m) for m in metrics if m in rule.modifies}
    found.unchanged = sorted(unchanged)
    return found
