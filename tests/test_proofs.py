"""The catalog-level rule proofs read back (dptool.generate.proofs): our demo must prove every link."""

from __future__ import annotations

import copy

from dptool.generate.proofs import read_proofs
from dptool.project.warehouse import Warehouse


def test_every_demo_rule_changes_its_metric(demo_project, demo_manifest, demo_catalog):
    """The demo's proofs warn (not fail) where a rule changes nothing, as on a user's data: the suite holds them
    to passing, so a demo rule that stops changing its metric fails here (and in conftest's `dbt build`)."""
    with Warehouse.of(demo_project.connection()) as wh:
        found = read_proofs(demo_manifest, demo_catalog, wh)
    links = {(r.id, m) for r in demo_catalog.rules.values() for m in r.modifies}
    assert found.unread == []
    proofs = [n for n in demo_manifest["nodes"].values() if n.get("resource_type") == "test"
              and "/metric_checks/" in n.get("original_file_path", "")]
    assert found.proofs == len(proofs) > 0
    assert found.unchanged == [], f"{len(found.unchanged)} of {len(links)} rule links change nothing"


def test_a_proof_that_finds_a_rule_unchanged_names_the_link(demo_project, demo_manifest, demo_catalog):
    # the compiled test of csat's proof, made to report the rule csat_neutral_exclusion as unchanged
    manifest = copy.deepcopy(demo_manifest)
    test = next(n for n in manifest["nodes"].values() if n.get("resource_type") == "test"
                and n.get("attached_node") == "model.dptool_demo.csat__rule_variants")
    test["compiled_code"] = "select 'csat_neutral_exclusion' as dptool_variant, 'x' as failure"
    with Warehouse.of(demo_project.connection()) as wh:
        found = read_proofs(manifest, demo_catalog, wh)
    assert found.unchanged == [("csat_neutral_exclusion", "csat")]
    # a proof without compiled SQL (target/manifest.json of `dbt parse`) is not read, and says so
    test.pop("compiled_code")
    with Warehouse.of(demo_project.connection()) as wh:
        found = read_proofs(manifest, demo_catalog, wh)
    assert found.unchanged == [] and len(found.unread) == 1 and "no compiled SQL" in found.unread[0]
