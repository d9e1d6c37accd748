"""The catalog-level rule proofs read back (dptool.generate.proofs): our demo must prove every link."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from dptool.generate.proofs import read_proofs
from dptool.project.catalog import load_catalog
from dptool.project.warehouse import Warehouse

SHOP = load_catalog(json.loads((Path(__file__).parent / "fixtures" / "shop_manifest.json").read_text(encoding="utf-8")))


def test_every_demo_rule_changes_its_metric(demo_project, demo_manifest, demo_catalog):
    """The demo's proofs warn (not fail) where a rule changes nothing, as on a user's data: the suite holds them
    to passing, so a demo rule that stops changing its metric fails here (and in conftest's `dbt build`)."""
    with Warehouse.of(demo_project.connection()) as wh:
        found = read_proofs(demo_manifest, demo_catalog, wh)
    links = {(r.id, m) for r in demo_catalog.rules.values() for m in r.modifies}
    proofs = [n for n in demo_manifest["nodes"].values() if n.get("resource_type") == "test"
              and "/metric_checks/" in n.get("original_file_path", "")]
    assert found.unread == []
    assert found.proofs == len(proofs) > 0
    assert found.unchanged == [], f"{len(found.unchanged)} of {len(links)} rule links change nothing"


def _proof_manifest(relation: str, **kwargs) -> dict:
    model = {"resource_type": "model", "name": "aov__rule_variants", "relation_name": relation,
             "original_file_path": "models/sales/metric_checks/aov__rule_variants.sql",
             "depends_on": {"nodes": ["model.shop.avg_order_value"]}}
    test = {"resource_type": "test", "attached_node": "model.shop.aov__rule_variants",
            "test_metadata": {"namespace": "dptool", "name": "rule_changes_answer",
                              "kwargs": {"model": "{{ get_where_subquery(ref('aov__rule_variants')) }}", **kwargs}}}
    return {"nodes": {"model.shop.aov__rule_variants": model, "test.shop.proof": test,
                      "model.shop.avg_order_value": {"resource_type": "model", "name": "avg_order_value"}}}


def test_a_rule_that_changes_nothing_is_named_with_its_metric(tmp_path):
    """The check of the dbt test (rows_differ), on the proof model's rows: exclude_tests leaves the value as it
    was (but for float noise below the 9th digit), capital_override changes it."""
    path = tmp_path / "w.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create table main.proof as select * from (values ('base', 10.0), ('exclude_tests', 10.0 + 1e-12), "
                "('capital_override', 12.0)) as t(variant, value)")
    con.close()
    with Warehouse(path) as wh:
        found = read_proofs(_proof_manifest('"w"."main"."proof"'), SHOP, wh)
        assert (found.proofs, found.unchanged, found.unread) == (1, [("exclude_tests", "avg_order_value")], [])
        # a proof model that is not built is not read, and says so
        missing = read_proofs(_proof_manifest('"w"."main"."not_built"'), SHOP, wh)
    assert missing.proofs == 0 and missing.unchanged == [] and len(missing.unread) == 1
    assert missing.unread[0].startswith("test.shop.proof: ") and "not_built" in missing.unread[0]


def test_the_card_claims_only_what_proofs_checked():
    """"every proven rule changes its metric" only when proofs were read; without rows, "not checked"."""
    from dataclasses import replace

    from dptool.generate.export import _proofs_section
    from dptool.generate.proofs import ProofFindings

    shop = SHOP
    assert "- none: every proven rule changes its metric" in _proofs_section(ProofFindings(proofs=3), shop)
    unread = _proofs_section(ProofFindings(proofs=0), shop)
    assert not [line for line in unread if "every proven rule" in line]
    assert any(line.startswith("- not checked: no catalog-level proof has rows") for line in unread)
    assert "- none: the project declares no rule" in _proofs_section(ProofFindings(), replace(shop, rules={}))
