"""Definitions before a policy: every rule document of the kb ends with each metric it modifies as the catalog
defines it, so "had it never been adopted" and "apply only" another policy have one reading; the conventions say
what "apply only" drops. On a hand-made manifest (tests/fixtures/shop_manifest.json: an override and a definitional
rule) and on the demo's declarations (the weights of the Seller Fulfillment Score, Fee Income before 1996's policy).
The golds behind them are recomputed in tests/test_conventions.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from dptool.generate.export import CONVENTION_ITEMS, WITHOUT_POLICY, conventions_section, write_domain_kb
from dptool.project.catalog import load_catalog

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"


def _shop():
    return load_catalog(json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8")))


def test_every_rule_document_ends_with_its_metrics_as_the_catalog_defines_them(tmp_path):
    catalog = _shop()
    assert {r.type for r in catalog.rules.values()} >= {"override", "definitional"}
    write_domain_kb(tmp_path / "sales", catalog, "sales")
    for rule in catalog.rules.values():
        text = (tmp_path / "sales" / "rules" / f"{rule.id}.md").read_text(encoding="utf-8")
        head, _, tail = text.partition(f"\n## {WITHOUT_POLICY}\n")
        assert tail and "\n## " not in tail, rule.id  # the last section, after the document as its owners wrote it
        assert head.rstrip().endswith(rule.document.strip().splitlines()[-1].strip())
        lines = [line for line in tail.splitlines() if line.startswith(f"- {WITHOUT_POLICY}: ")]
        assert lines == [f"- {WITHOUT_POLICY}: {catalog.metrics[m].label} is as the catalog defines it: "
                         f"{catalog.metrics[m].formula}" for m in rule.modifies], rule.id


def test_the_conventions_say_what_apply_only_drops():
    text = CONVENTION_ITEMS["Apply only"]
    for words in ('"apply only"', "no other policy of the metric or of its components", "redefines the metric",
                  "overrides it", "replaces its weights", "default weights", "as the catalog defines it"):
        assert words in text, words
    assert "- **Apply only.** " + text in conventions_section()


def _declared(path: str, name: str) -> dict:
    (model,) = [m for m in yaml.safe_load((REPO / path).read_text(encoding="utf-8"))["models"] if m["name"] == name]
    return model


def test_the_demo_s_weights_and_fee_formulas_say_what_the_sql_does_without_the_policy():
    """The Seller Fulfillment Score's catalog formula carries the default weights its value computes (0.6 / 0.4), and
    the weights policy states both those and its own (0.7 / 0.3) as its macro sets them; Fee Income's formula is
    statement fees only, as its model computes fee_amount without the 1996 policy (which adds sanction interest)."""
    score = _declared("models/ecommerce/metrics/_ecommerce__metrics.yml", "seller_fulfillment_score")
    decl = score["config"]["meta"]["dptool"]["metric"]
    assert decl["value"] == "0.6 * on_time_delivery_rate + 0.4 * csat"
    assert decl["formula"] == "0.6 × On-Time Delivery Rate + 0.4 × CSAT"
    macro = (REPO / "macros/ecommerce/rule__seller_score_weights.sql").read_text(encoding="utf-8")
    assert "'0.7 * on_time_delivery_rate + 0.3 * csat'" in macro
    doc = (REPO / "models/ecommerce/docs/rule__seller_score_weights.md").read_text(encoding="utf-8")
    rule = doc.split("## 4. Rule")[1].split("\n## ")[0]
    assert "0.7 for the on-time component" in rule and "0.3 for the satisfaction component" in rule
    assert "override the catalog default of 0.6 and 0.4" in rule

    fee = _declared("models/banking/metrics/_banking__metrics.yml", "fee_income")
    assert fee["config"]["meta"]["dptool"]["metric"]["formula"] == "SUM(fees charged by the bank: statement fees)"
    sql = (REPO / "models/banking/metrics/fee_income.sql").read_text(encoding="utf-8")
    (fee_amount,) = re.findall(r"case when .*? end as fee_amount", sql)
    assert fee_amount == "case when k_symbol = 'SLUZBY' then amount else 0 end as fee_amount"
    policy = (REPO / "macros/banking/rule__fee_structure_change_1996.sql").read_text(encoding="utf-8")
    assert "k_symbol = 'SANKC. UROK' and date >= 960101 then amount" in policy
