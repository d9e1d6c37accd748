"""Stage 1, load: manifest -> catalog, on the dbt-built demo project and on a hand-written manifest."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from dptool.errors import DptoolError
from dptool.project.catalog import Join, load_catalog

FIXTURES = Path(__file__).parent / "fixtures"
PROJECT = "dptool_demo"
METRICS_YML = "models/ecommerce/metrics/_ecommerce__metrics.yml"
BANKING_METRICS_YML = "models/banking/metrics/_banking__metrics.yml"
TABLES_YML = "models/ecommerce/staging/_ecommerce__tables.yml"
RULES_YML = "macros/ecommerce/_ecommerce__rules.yml"


def shop_manifest() -> dict:
    return json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8"))


def decls(node: dict) -> list[dict]:
    """Every copy of a node's `dptool` declaration (dbt writes meta both on the node and in its config)."""
    metas = [node.get("meta"), (node.get("config") or {}).get("meta")]
    return [m["dptool"] for m in metas if m and "dptool" in m]


def edit_metric(manifest: dict, name: str, change) -> None:
    for decl in decls(manifest["nodes"][f"model.{PROJECT}.{name}"]):
        change(decl["metric"])


def edit_rule(manifest: dict, name: str, change) -> None:
    for decl in decls(manifest["macros"][f"macro.{PROJECT}.rule__{name}"]):
        change(decl["rule"])


def edit_column(manifest: dict, table: str, column: str, change) -> None:
    for decl in decls(manifest["nodes"][f"model.{PROJECT}.{table}"]["columns"][column]):
        change(decl)


def rename_macro(manifest: dict, old: str, new: str) -> None:
    macro = manifest["macros"].pop(f"macro.{PROJECT}.{old}")
    macro["name"] = new
    macro["unique_id"] = f"macro.{PROJECT}.{new}"
    manifest["macros"][macro["unique_id"]] = macro


def drop_all_declarations(manifest: dict) -> None:
    for node in [*manifest["nodes"].values(), *manifest["macros"].values()]:
        for decl in decls(node):
            decl.pop("metric", None)
            decl.pop("rule", None)


# --- the demo project ---------------------------------------------------------------------------------------------


def test_demo_counts(demo_catalog):
    c = demo_catalog.subset("ecommerce")
    counts = (len(c.tables), len(c.dimensions), len(c.joins), len(c.metrics), len(c.rules))
    assert counts == (8, 8, 7, 31, 18)
    assert c.project == PROJECT


def test_demo_dimensions(demo_catalog):
    ecommerce = demo_catalog.subset("ecommerce")
    kinds = {d.id.removeprefix(f"model.{PROJECT}."): d.kind for d in ecommerce.dimensions.values()}
    assert kinds == {
        "customers.customer_city": "spatial",
        "customers.customer_state": "spatial",
        "order_payments.payment_type": "categorical",
        "order_reviews.review_score": "categorical",
        "orders.order_purchase_timestamp": "temporal",
        "orders.order_status": "categorical",
        "product_category_name_translation.product_category_name_english": "categorical",
        "sellers.seller_state": "spatial",
    }


def test_demo_joins_from_relationships_tests(demo_catalog):
    joins = {(j.from_table.split(".")[-1], j.from_column, j.to_table.split(".")[-1], j.to_column)
             for j in demo_catalog.subset("ecommerce").joins}
    assert joins == {
        ("order_items", "order_id", "orders", "order_id"),
        ("order_items", "product_id", "products", "product_id"),
        ("order_items", "seller_id", "sellers", "seller_id"),
        ("order_payments", "order_id", "orders", "order_id"),
        ("order_reviews", "order_id", "orders", "order_id"),
        ("orders", "customer_id", "customers", "customer_id"),
        ("products", "product_category_name", "product_category_name_translation", "product_category_name"),
    }


def test_metric_tables_walk_through_ephemeral_models(demo_catalog, demo_manifest):
    expected = json.loads((FIXTURES / "demo_metric_tables.json").read_text(encoding="utf-8"))
    ecommerce = demo_catalog.subset("ecommerce")
    found = {m.id: [demo_catalog.tables[t].name for t in m.tables] for m in ecommerce.metrics.values()}
    assert found == expected
    # avg_review_score reads no table directly: only the ephemeral int_order_reviews
    assert demo_manifest["nodes"][f"model.{PROJECT}.avg_review_score"]["depends_on"]["nodes"] == [
        f"model.{PROJECT}.int_order_reviews"
    ]


def test_metric_declaration(demo_catalog):
    m = demo_catalog.metrics["avg_delivery_days"]
    assert (m.label, m.value, m.format, m.tier, m.grain, m.components) == (
        "Average Delivery Time", "avg(delivery_days)", "number", "L1", "delivered orders", ())
    assert m.unique_id == f"model.{PROJECT}.avg_delivery_days"


def test_composite_declaration(demo_catalog):
    """A composite's value is an expression over its components; it is sliced by the columns they all have and
    reads the tables any of them reads."""
    m = demo_catalog.metrics["seller_fulfillment_score"]
    assert (m.label, m.value, m.format, m.tier) == (
        "Seller Fulfillment Score", "0.6 * on_time_delivery_rate + 0.4 * csat", "number", "L3")
    assert m.components == ("on_time_delivery_rate", "csat")
    on_time, csat = (demo_catalog.metrics[c] for c in m.components)
    assert m.columns == tuple(c for c in on_time.columns if c in csat.columns) == (
        "order_id", "order_status", "order_purchase_timestamp", "customer_state", "customer_city")
    assert m.tables == tuple(sorted(set(on_time.tables) | set(csat.tables)))
    # no seller state: the On-Time Delivery Rate has none, so a composite slice by it would mean nothing
    assert [d.column for d in demo_catalog.dimensions_of(m)] == ["customer_city", "customer_state",
                                                                  "order_purchase_timestamp", "order_status"]


# --- rule scope: a closure over components -------------------------------------------------------------------------


def _hand_catalog(components: dict, modifies: dict):
    from dptool.project.catalog import Catalog, Metric, Rule

    catalog = Catalog("p", "hash")
    catalog.metrics = {m: Metric(m, f"model.p.{m}", "d", m, "x", "", "number", "", "", "", "", tuple(c), (), ())
                       for m, c in components.items()}
    catalog.rules = {r: Rule(r, f"macro.p.rule__{r}", "d", r, "definitional", "", {}, tuple(ms), "doc")
                     for r, ms in modifies.items()}
    return catalog


def test_governing_rules_are_a_closure_over_components():
    catalog = _hand_catalog({"margin": ["revenue", "cost"], "revenue": ["orders"], "cost": [], "orders": [],
                             "other": []},
                            {"refunds": ["revenue"], "fx": ["cost", "other"], "weights": ["margin"],
                             "test_orders": ["orders"], "unrelated": ["other"]})
    assert catalog.metric_tree("margin") == ["margin", "revenue", "cost", "orders"]
    assert [r.id for r in catalog.governing_rules("margin")] == ["fx", "refunds", "test_orders", "weights"]
    assert [r.id for r in catalog.governing_rules("revenue")] == ["refunds", "test_orders"]
    assert [r.id for r in catalog.governing_rules("orders")] == ["test_orders"]
    assert [r.id for r in catalog.rules_of("margin")] == ["weights"]  # the declared edges stay as declared


def test_governing_rules_end_where_a_cycle_started():
    catalog = _hand_catalog({"a": ["b"], "b": ["c"], "c": ["a"], "d": []},
                            {"ra": ["a"], "rb": ["b"], "rc": ["c"], "rd": ["d"]})
    for metric in ("a", "b", "c"):
        assert [r.id for r in catalog.governing_rules(metric)] == ["ra", "rb", "rc"]
    assert catalog.metric_tree("b") == ["b", "c", "a"]
    assert [r.id for r in catalog.governing_rules("d")] == ["rd"]


def test_rules_argument_routes_each_rule_to_the_metrics_it_modifies():
    catalog = _hand_catalog({"margin": ["revenue", "cost"], "revenue": [], "cost": []},
                            {"refunds": ["revenue"], "fx": ["cost", "revenue"], "weights": ["margin"]})
    assert catalog.rules_argument("revenue", ["refunds", "fx"]) == ["refunds", "fx"]  # not a composite: the list
    assert catalog.rules_argument("margin", ["fx", "weights", "refunds"]) == {
        "margin": ["weights"], "revenue": ["fx", "refunds"], "cost": ["fx"]}
    # every metric of the composite is named, with no rule too (the gold model must ref each of them)
    assert catalog.rules_argument("margin", []) == {"margin": [], "revenue": [], "cost": []}
    # a rule that modifies none of them (an ablation's pairing) applies to the composite itself
    assert catalog.rules_argument("margin", ["elsewhere"]) == {"margin": ["elsewhere"], "revenue": [], "cost": []}


def test_governing_rules_of_the_demo_composites(demo_catalog):
    def ids(metric):
        return sorted(r.id for r in demo_catalog.governing_rules(metric))

    # GMV per Active Seller: GMV's revenue recognition and insured freight, Active Seller Count's definition
    assert ids("gmv_per_active_seller") == ["active_seller_definition", "insured_freight_exclusion",
                                            "revenue_recognition"]
    assert demo_catalog.rules_of("gmv_per_active_seller") == []
    # the Cross-Sell Index: card penetration's eligibility and minor protection among them (issue 12, t_1455)
    assert ids("cross_sell_index") == ["card_eligibility_definition", "minor_client_protection",
                                       "small_segment_suppression", "standing_order_amount_validation"]
    # a composite's own rule and its components'
    assert ids("seller_fulfillment_score") == ["csat_neutral_exclusion", "delivery_sla_grace_period",
                                               "review_privacy_quarantine", "seller_score_weights"]
    # a metric that is no composite: its own rules
    for metric in ("transaction_count", "gmv", "credit_risk_score"):
        assert demo_catalog.governing_rules(metric) == demo_catalog.rules_of(metric)


def test_rule_documents_resolved(demo_catalog, demo_manifest):
    for rule in demo_catalog.rules.values():
        block = demo_manifest["docs"][f"doc.{PROJECT}.rule__{rule.id}"]["block_contents"]
        assert rule.document == block.strip(), rule.id
    assert demo_catalog.rules["outlier_exclusion"].document.startswith(
        "# POL-ANL-007 — Delivery Duration Outliers in Average Delivery Time")


def test_rule_document_from_doc_call(demo_manifest):
    manifest = copy.deepcopy(demo_manifest)
    macro = manifest["macros"][f"macro.{PROJECT}.rule__outlier_exclusion"]
    macro["description"] = '{{ doc("rule__outlier_exclusion") }}'
    rule = load_catalog(manifest).rules["outlier_exclusion"]
    assert rule.document == manifest["docs"][f"doc.{PROJECT}.rule__outlier_exclusion"]["block_contents"].strip()


def test_rule_declaration(demo_catalog):
    rule = demo_catalog.rules["sao_paulo_approval_clock"]
    assert (rule.title, rule.type, rule.effective_from) == (
        "São Paulo Approval Clock Override", "override", "2017-03-01")
    assert rule.applies_when == {"customer_state": "SP"}
    assert rule.modifies == ("avg_delivery_days",)
    assert rule.domain == "ecommerce"


def test_domain_from_fqn(demo_catalog, demo_manifest):
    # metrics declare no domain: the first folder under the project names it
    assert {m.domain for m in demo_catalog.metrics.values()} == {"ecommerce", "banking"}
    manifest = copy.deepcopy(demo_manifest)
    manifest["nodes"][f"model.{PROJECT}.gmv"]["fqn"] = [PROJECT, "finance", "metrics", "gmv"]
    manifest["nodes"][f"model.{PROJECT}.csat"]["fqn"] = [PROJECT, "csat"]
    catalog = load_catalog(manifest)
    assert catalog.metrics["gmv"].domain == "finance"
    assert catalog.metrics["csat"].domain == PROJECT
    # a rule takes the domain of the first metric it modifies
    assert catalog.rules["revenue_recognition"].domain == "finance"


def test_dimensions_of_and_rules_of(demo_catalog):
    metric = demo_catalog.metrics["avg_delivery_days"]
    assert [d.id for d in demo_catalog.dimensions_of(metric)] == [
        f"model.{PROJECT}.customers.customer_city",
        f"model.{PROJECT}.customers.customer_state",
        f"model.{PROJECT}.orders.order_purchase_timestamp",
        f"model.{PROJECT}.orders.order_status",
    ]
    rules = demo_catalog.rules_of("avg_delivery_days")
    assert [r.id for r in rules] == ["outlier_exclusion", "sao_paulo_approval_clock"]
    assert demo_catalog.table_by_name("orders").unique_id == f"model.{PROJECT}.orders"
    with pytest.raises(KeyError):
        demo_catalog.table_by_name("olist_orders_dataset")


def test_manifest_hash_ignores_timestamps(demo_manifest):
    manifest = copy.deepcopy(demo_manifest)
    manifest["nodes"][f"model.{PROJECT}.orders"]["created_at"] = 1.0
    manifest["metadata"]["generated_at"] = "2000-01-01T00:00:00Z"
    assert load_catalog(manifest).manifest_hash == load_catalog(demo_manifest).manifest_hash
    edit_metric(manifest, "gmv", lambda d: d.update(value="sum(price)"))
    assert load_catalog(manifest).manifest_hash != load_catalog(demo_manifest).manifest_hash


# --- malformed declarations: one error, one line, naming file, node and key ---------------------------------------

MALFORMED = {
    "metric_without_value": (
        lambda m: edit_metric(m, "avg_delivery_days", lambda d: d.pop("value")),
        f"{METRICS_YML}: model.{PROJECT}.avg_delivery_days: meta.dptool.metric.value is missing "
        "(the aggregate SQL, e.g. avg(delivery_days))",
    ),
    "unknown_metric_key": (
        lambda m: edit_metric(m, "gmv", lambda d: d.update(colour="red")),
        f"{METRICS_YML}: model.{PROJECT}.gmv: meta.dptool.metric.colour is not a metric key "
        "(label, value, unit, format, formula, tier, components, grain, period, duration, entity, selection)",
    ),
    # Berka's account, trans and loan tables each have a `date`: which one places a transaction in time is
    # declared, never guessed (the one of the table with most rows was the transaction date on the demo data,
    # and the account opening date on Berka's own, whose trans sample holds three weeks)
    "period_missing_where_two_dates": (
        lambda m: edit_metric(m, "transaction_volume", lambda d: d.pop("period")),
        f"{BANKING_METRICS_YML}: model.{PROJECT}.transaction_volume: meta.dptool.metric.period is missing, and the "
        "metric's columns are 2 temporal dimensions (account.date, trans.date); name the one whose date places a "
        "row in a period (period: table.column)",
    ),
    "period_column_of_two_tables": (
        lambda m: edit_metric(m, "transaction_volume", lambda d: d.update(period="date")),
        f"{BANKING_METRICS_YML}: model.{PROJECT}.transaction_volume: meta.dptool.metric.period is 'date', a column "
        "of account.date, trans.date; name one as table.column",
    ),
    "period_not_a_temporal_dimension": (
        lambda m: edit_metric(m, "gmv", lambda d: d.update(period="orders.order_approved_at")),
        f"{METRICS_YML}: model.{PROJECT}.gmv: meta.dptool.metric.period is 'orders.order_approved_at', which is no "
        "temporal dimension of the metric's tables that its model exposes as a column (those are: "
        "orders.order_purchase_timestamp); mark the column `meta.dptool.dimension: temporal` on its table and list "
        "it among the metric's columns",
    ),
    "bad_metric_format": (
        lambda m: edit_metric(m, "csat", lambda d: d.update(format="ratio")),
        f"{METRICS_YML}: model.{PROJECT}.csat: meta.dptool.metric.format is 'ratio'; "
        "expected one of number, percent, currency",
    ),
    "unknown_component": (
        lambda m: edit_metric(m, "seller_fulfillment_score", lambda d: d.update(components=["csat", "nps"])),
        f"{METRICS_YML}: model.{PROJECT}.seller_fulfillment_score: meta.dptool.metric.components names "
        "unknown metric 'nps'",
    ),
    "composite_value_over_rows": (
        lambda m: edit_metric(m, "gmv_per_active_seller", lambda d: d.update(value="sum(price) / active_sellers")),
        f"{METRICS_YML}: model.{PROJECT}.gmv_per_active_seller: meta.dptool.metric.value of a composite is an "
        "expression over its components (gmv, active_sellers), e.g. gmv / active_sellers; it names 'price', which is "
        "no component",
    ),
    "composite_value_aggregates": (
        lambda m: edit_metric(m, "gmv_per_active_seller", lambda d: d.update(value="sum(gmv) / active_sellers")),
        f"{METRICS_YML}: model.{PROJECT}.gmv_per_active_seller: meta.dptool.metric.value of a composite is an "
        "expression over its components (gmv, active_sellers), e.g. gmv / active_sellers; it aggregates rows",
    ),
    "composite_component_unused": (
        lambda m: edit_metric(m, "clv", lambda d: d.update(components=["gmv", "unique_buyers", "order_volume"])),
        f"{METRICS_YML}: model.{PROJECT}.clv: meta.dptool.metric.value does not use component 'order_volume'",
    ),
    "composite_not_ref_its_component": (
        lambda m: m["nodes"][f"model.{PROJECT}.clv"]["depends_on"]["nodes"].remove(f"model.{PROJECT}.gmv"),
        f"{METRICS_YML}: model.{PROJECT}.clv: meta.dptool.metric.components names 'gmv', which "
        "the model does not ref; write the model as {{ dptool.composite_metric(['gmv', 'unique_buyers']) }}",
    ),
    "composite_column_not_shared": (
        lambda m: m["nodes"][f"model.{PROJECT}.gmv_per_active_seller"]["columns"].update(
            seller_id={"name": "seller_id", "description": "The seller."}),
        f"{METRICS_YML}: model.{PROJECT}.gmv_per_active_seller: columns.seller_id is not a column of every "
        "component of the composite (gmv, active_sellers); a composite is sliced by the columns they share",
    ),
    "rule_modifies_unknown_metric": (
        lambda m: edit_rule(m, "outlier_exclusion", lambda d: d.update(modifies=["avg_delivery_dayz"])),
        f"{RULES_YML}: macro.{PROJECT}.rule__outlier_exclusion: meta.dptool.rule.modifies names "
        "unknown metric 'avg_delivery_dayz'",
    ),
    "bad_rule_type": (
        lambda m: edit_rule(m, "outlier_exclusion", lambda d: d.update(type="exclusion")),
        f"{RULES_YML}: macro.{PROJECT}.rule__outlier_exclusion: meta.dptool.rule.type is 'exclusion'; "
        "expected one of definitional, exclusionary, temporal, conditional, privacy, override",
    ),
    "unknown_rule_key": (
        lambda m: edit_rule(m, "revenue_recognition", lambda d: d.update(owner="finance")),
        f"{RULES_YML}: macro.{PROJECT}.rule__revenue_recognition: meta.dptool.rule.owner is not a rule key "
        "(title, type, effective_from, applies_when, modifies)",
    ),
    "rule_modifies_nothing": (
        lambda m: edit_rule(m, "csat_neutral_exclusion", lambda d: d.update(modifies=[])),
        f"{RULES_YML}: macro.{PROJECT}.rule__csat_neutral_exclusion: meta.dptool.rule.modifies is empty "
        "(the metric or metrics the rule changes)",
    ),
    "bad_dimension_kind": (
        lambda m: edit_column(m, "orders", "order_status", lambda d: d.update(dimension="category")),
        f"{TABLES_YML}: model.{PROJECT}.orders: columns.order_status.meta.dptool.dimension is 'category'; "
        "expected one of temporal, spatial, categorical, or false (not a dimension)",
    ),
    "rule_macro_not_named_rule": (
        lambda m: rename_macro(m, "rule__outlier_exclusion", "outlier_exclusion"),
        f"{RULES_YML}: macro.{PROJECT}.outlier_exclusion: meta.dptool.rule is declared on macro "
        "'outlier_exclusion'; rule macros are named rule__<id>",
    ),
    "applies_when_not_a_dimension": (
        lambda m: edit_rule(m, "sao_paulo_approval_clock",
                            lambda d: d.update(applies_when={"customer_zip_code_prefix": "01"})),
        f"{RULES_YML}: macro.{PROJECT}.rule__sao_paulo_approval_clock: meta.dptool.rule.applies_when names "
        "'customer_zip_code_prefix', which is no dimension",
    ),
    "no_metrics": (
        drop_all_declarations,
        "target/manifest.json: no metric declared; declare metrics in the dbt semantic layer (semantic_models with "
        "measures, and simple, ratio or derived metrics), or add `config: {meta: {dptool: {metric: {value: "
        "'avg(x)'}}}}` to a model at the metric's row grain (see `dptool init`)",
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_declaration(demo_manifest, case):
    edit, message = MALFORMED[case]
    manifest = copy.deepcopy(demo_manifest)
    edit(manifest)
    with pytest.raises(DptoolError) as info:
        load_catalog(manifest, "target/manifest.json")
    assert str(info.value) == message
    assert "\n" not in str(info.value)


def test_rule_document_too_short(demo_manifest):
    manifest = copy.deepcopy(demo_manifest)
    manifest["macros"][f"macro.{PROJECT}.rule__outlier_exclusion"]["description"] = "Deliveries over 60 days leave."
    with pytest.raises(DptoolError, match=r"^macros/ecommerce/_ecommerce__rules\.yml: "
                                          r"macro\.dptool_demo\.rule__outlier_exclusion: description "):
        load_catalog(manifest)


def test_period_and_duration_of_the_demo_metrics(demo_catalog):
    """The date that places a row in a period, and how durations count, as the metric YAML says (or derives)."""
    def period(metric_id):
        m = demo_catalog.metrics[metric_id]
        return demo_catalog.tables[demo_catalog.dimensions[m.period].table].name + "." + \
            demo_catalog.dimensions[m.period].column

    assert period("transaction_volume") == "trans.date"
    assert period("loan_volume") == "loan.date"
    assert period("new_accounts") == "account.date"
    # reviews count in the period of their order's purchase, and the metric model says so
    assert period("csat") == "orders.order_purchase_timestamp"
    assert demo_catalog.metrics["csat"].period_doc.startswith("Purchase time of the reviewed order: a review counts")
    assert all(m.period for m in demo_catalog.metrics.values())
    # the only temporal dimension a metric has is its period
    for m in demo_catalog.metrics.values():
        assert [d.id for d in demo_catalog.dimensions_of(m) if d.kind == "temporal"] == [m.period], m.id
    # declared, and derived where the metric model computes its durations with dptool.days_between alone
    assert demo_catalog.metrics["avg_delivery_days"].duration.startswith("whole calendar days from purchase to")
    assert demo_catalog.metrics["avg_handling_days"].duration.startswith("whole calendar days between two dates")
    # declared: dbt.datediff in hours counts hour boundaries
    assert "hour boundaries crossed" in demo_catalog.metrics["avg_approval_hours"].duration
    assert demo_catalog.metrics["gmv"].duration == ""


# --- a hand-written manifest ------------------------------------------------------------------------------------


def test_shop_catalog():
    c = load_catalog(shop_manifest())
    assert c.project == "shop"
    assert sorted(c.dimensions) == [
        "model.shop.customers.city", "model.shop.customers.state", "model.shop.orders.ordered_at",
        "model.shop.orders.status", "model.shop.payments.method",
    ]
    assert c.dimensions["model.shop.orders.status"].label == "order status"
    assert c.dimensions["model.shop.customers.city"].label == "city"
    assert c.joins == [
        Join("model.shop.orders", "customer_id", "model.shop.customers", "customer_id"),
        Join("model.shop.payments", "order_id", "model.shop.orders", "order_id"),
    ]
    assert c.metrics["avg_order_value"].tables == ("model.shop.customers", "model.shop.orders", "model.shop.payments")
    assert c.metrics["paid_rate"].domain == "sales"
    # `modifies` may be one name instead of a list
    assert c.rules["capital_override"].modifies == ("avg_order_value",)
    assert c.rules["paid_definition"].document.startswith("# Paid orders\n\nAn order counts as paid once")


def test_table_on_ephemeral_model():
    manifest = shop_manifest()
    manifest["nodes"]["model.shop.orders"]["relation_name"] = None
    with pytest.raises(DptoolError) as info:
        load_catalog(manifest)
    assert str(info.value) == ("models/sales/staging/_sales__tables.yml: model.shop.orders: meta.dptool.table is set "
                               "on a node that has no relation (ephemeral?)")


# --- one label, one metric (issue 23, item 7c) ------------------------------------------------------------------


def test_two_metrics_with_one_label_are_refused():
    # case and spacing aside: kb/metrics.md would hold two `## Average Order Value` sections
    manifest = shop_manifest()
    for meta in decls(manifest["nodes"]["model.shop.paid_rate"]):
        meta["metric"]["label"] = "average  order value"
    with pytest.raises(DptoolError) as info:
        load_catalog(manifest)
    assert str(info.value) == (
        "models/sales/metrics/_sales__metrics.yml: model.shop.avg_order_value and "
        "models/sales/metrics/_sales__metrics.yml: model.shop.paid_rate both have the label 'average  order value': "
        "kb/metrics.md would hold two sections of that name and a question could not say which it means; give each "
        "its own meta.dptool.metric.label (the semantic layer's: the metric's label)")


def test_one_label_in_two_domains_is_refused_too(demo_manifest):
    # the kb's metric catalog is one file for every domain, and a question names the metric, not the domain
    manifest = copy.deepcopy(demo_manifest)
    edit_metric(manifest, "transaction_volume", lambda m: m.update(label="Average Delivery Time"))
    with pytest.raises(DptoolError) as info:
        load_catalog(manifest)
    assert str(info.value).startswith(
        f"{METRICS_YML}: model.{PROJECT}.avg_delivery_days and "
        f"{BANKING_METRICS_YML}: model.{PROJECT}.transaction_volume both have the label 'Average Delivery Time': ")


# held-out round four (issue 23's "done when"): one label written other ways
@pytest.mark.parametrize("label", [
    "AVERAGE ORDER VALUE", " Average Order Value ", "Average\u00a0Order Value", "Average\tOrder\nValue",
    "\uff21verage Order Value", "Average Order-Value",
], ids=["upper", "padded", "nbsp", "tab-newline", "fullwidth", "hyphen"])
def test_round_four_one_label_written_another_way_is_refused(label):
    manifest = shop_manifest()
    for meta in decls(manifest["nodes"]["model.shop.paid_rate"]):
        meta["metric"]["label"] = label
    with pytest.raises(DptoolError, match="both have the label"):
        load_catalog(manifest)
