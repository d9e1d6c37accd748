"""Declarations are checked by type when the catalog is loaded (issue 16): every malformed `meta.dptool`,
relationships test or manifest is one DptoolError line naming the file, the node and the key."""

from __future__ import annotations

import copy
import json
import shutil

import pytest

from dptool.errors import DptoolError
from dptool.project import catalog, declarations, scaffold, semantic
from dptool.project.catalog import load_catalog
from dptool.project.dbt import DbtProject
from tests.test_catalog import (
    METRICS_YML,
    PROJECT,
    RULES_YML,
    TABLES_YML,
    decls,
    edit_column,
    edit_metric,
    edit_rule,
    shop_manifest,
)

DP_YML = "models/ecommerce/data_products/_ecommerce__data_products.yml"
GMV = f"{METRICS_YML}: model.{PROJECT}.gmv"
SCORE = f"{METRICS_YML}: model.{PROJECT}.seller_fulfillment_score"
OUTLIERS = f"{RULES_YML}: macro.{PROJECT}.rule__outlier_exclusion"
SAO_PAULO = f"{RULES_YML}: macro.{PROJECT}.rule__sao_paulo_approval_clock"
ORDERS = f"{TABLES_YML}: model.{PROJECT}.orders"
DELIVERY_DP = f"{DP_YML}: model.{PROJECT}.dp_delivery_performance"
RULE_TYPES = "definitional, exclusionary, temporal, conditional, privacy, override"
DIMENSION = "one of temporal, spatial, categorical, or false (not a dimension)"


def set_dptool(manifest: dict, uid: str, value) -> None:
    """Replace a node's whole `meta.dptool` (dbt writes it twice: on the node and in its config)."""
    node = manifest["nodes"][uid]
    for meta in (node["meta"], node["config"]["meta"]):
        meta["dptool"] = copy.deepcopy(value)


def edit_dptool(manifest: dict, uid: str, change) -> None:
    for decl in decls(manifest["nodes"][uid]):
        change(decl)


def edit_question(manifest: dict, change) -> None:
    edit_dptool(manifest, f"model.{PROJECT}.dp_delivery_performance",
                lambda d: change(d["data_product"]["questions"][0]))


# case -> (edit of the demo manifest, the one line it gives); each of these was accepted or crashed before
MALFORMED = {
    # metrics
    "components_a_number": (
        lambda m: edit_metric(m, "seller_fulfillment_score", lambda d: d.update(components=5)),
        f"{SCORE}: meta.dptool.metric.components is 5; expected a metric name, or a list of metric names or "
        "{metric, alias, where} (the metrics a composite is computed from)",
    ),
    "components_item_a_number": (
        lambda m: edit_metric(m, "seller_fulfillment_score", lambda d: d.update(components=["csat", 5])),
        f"{SCORE}: meta.dptool.metric.components[1] is 5; expected a metric name or {{metric, alias, where}}",
    ),
    "label_a_mapping": (
        lambda m: edit_metric(m, "gmv", lambda d: d.update(label={"a": "b"})),
        f"{GMV}: meta.dptool.metric.label is {{a: b}}; expected text (the metric's name in questions, "
        "e.g. Average Delivery Time)",
    ),
    "value_a_number": (
        lambda m: edit_metric(m, "gmv", lambda d: d.update(value=123)),
        f"{GMV}: meta.dptool.metric.value is 123; expected a SQL string (the aggregate SQL, e.g. avg(delivery_days))",
    ),
    "unit_a_mapping": (
        lambda m: edit_metric(m, "gmv", lambda d: d.update(unit={"currency": "BRL"})),
        f"{GMV}: meta.dptool.metric.unit is {{currency: BRL}}; expected text (e.g. days, BRL, share of orders)",
    ),
    "tier_a_list": (
        lambda m: edit_metric(m, "gmv", lambda d: d.update(tier=["L1"])),
        f"{GMV}: meta.dptool.metric.tier is [L1]; expected text (e.g. L1)",
    ),
    "grain_true": (
        lambda m: edit_metric(m, "gmv", lambda d: d.update(grain=True)),
        f"{GMV}: meta.dptool.metric.grain is true; expected text (what one row is, plural, e.g. delivered orders)",
    ),
    # rules
    "modifies_a_number": (
        lambda m: edit_rule(m, "outlier_exclusion", lambda d: d.update(modifies=5)),
        f"{OUTLIERS}: meta.dptool.rule.modifies is 5; expected a metric name or a list of metric names "
        "(the metric or metrics the rule changes)",
    ),
    "modifies_item_a_mapping": (
        lambda m: edit_rule(m, "outlier_exclusion", lambda d: d.update(modifies=[{"a": 1}])),
        f"{OUTLIERS}: meta.dptool.rule.modifies[0] is {{a: 1}}; expected a metric name",
    ),
    "effective_from_a_mapping": (
        lambda m: edit_rule(m, "outlier_exclusion", lambda d: d.update(effective_from={"year": 2017})),
        f"{OUTLIERS}: meta.dptool.rule.effective_from is {{year: 2017}}; expected a date as YYYY-MM-DD "
        "(e.g. '2017-01-01')",
    ),
    "effective_from_no_date": (
        lambda m: edit_rule(m, "outlier_exclusion", lambda d: d.update(effective_from="2017-13-01")),
        f"{OUTLIERS}: meta.dptool.rule.effective_from is '2017-13-01'; expected a date as YYYY-MM-DD "
        "(e.g. '2017-01-01')",
    ),
    "effective_from_a_year": (
        lambda m: edit_rule(m, "outlier_exclusion", lambda d: d.update(effective_from=2017)),
        f"{OUTLIERS}: meta.dptool.rule.effective_from is 2017; expected a date as YYYY-MM-DD (e.g. '2017-01-01')",
    ),
    "applies_when_value_a_list": (
        lambda m: edit_rule(m, "sao_paulo_approval_clock",
                            lambda d: d.update(applies_when={"customer_state": ["SP", "RJ"]})),
        f"{SAO_PAULO}: meta.dptool.rule.applies_when.customer_state is [SP, RJ]; expected one value "
        "(text or a number)",
    ),
    "applies_when_text": (
        lambda m: edit_rule(m, "sao_paulo_approval_clock", lambda d: d.update(applies_when="SP")),
        f"{SAO_PAULO}: meta.dptool.rule.applies_when is 'SP'; expected a mapping of a dimension column to one "
        "value, e.g. {customer_state: SP}",
    ),
    "type_missing": (
        lambda m: edit_rule(m, "outlier_exclusion", lambda d: d.pop("type")),
        f"{OUTLIERS}: meta.dptool.rule.type is missing; expected one of {RULE_TYPES}",
    ),
    "type_a_number": (
        lambda m: edit_rule(m, "outlier_exclusion", lambda d: d.update(type=5)),
        f"{OUTLIERS}: meta.dptool.rule.type is 5; expected one of {RULE_TYPES}",
    ),
    "title_a_list": (
        lambda m: edit_rule(m, "outlier_exclusion", lambda d: d.update(title=["a"])),
        f"{OUTLIERS}: meta.dptool.rule.title is [a]; expected text",
    ),
    # columns: dimensions
    "dimension_true": (
        lambda m: edit_column(m, "orders", "order_status", lambda d: d.update(dimension=True)),
        f"{ORDERS}: columns.order_status.meta.dptool.dimension is true; expected {DIMENSION}",
    ),
    "dimension_a_number": (
        lambda m: edit_column(m, "orders", "order_status", lambda d: d.update(dimension=5)),
        f"{ORDERS}: columns.order_status.meta.dptool.dimension is 5; expected {DIMENSION}",
    ),
    "dimension_label_a_mapping": (
        lambda m: edit_column(m, "orders", "order_status", lambda d: d.update(label={"x": 1})),
        f"{ORDERS}: columns.order_status.meta.dptool.label is {{x: 1}}; expected text (the dimension's name in "
        "questions)",
    ),
    "column_key_misspelt": (
        lambda m: edit_column(m, "orders", "order_status", lambda d: d.update(dimenson="categorical")),
        f"{ORDERS}: columns.order_status.meta.dptool.dimenson is not a column key (dimension, label, provenance)",
    ),
    # tables and other nodes
    "dptool_is_text": (
        lambda m: set_dptool(m, f"model.{PROJECT}.orders", "table"),
        f"{ORDERS}: meta.dptool is 'table'; expected a mapping of dptool's keys, e.g. {{table: true}}",
    ),
    "table_not_a_flag": (
        lambda m: set_dptool(m, f"model.{PROJECT}.orders", {"table": "yes", "domain": "ecommerce"}),
        f"{ORDERS}: meta.dptool.table is 'yes'; expected true or false (whether agents may query it)",
    ),
    "domain_a_list": (
        lambda m: set_dptool(m, f"model.{PROJECT}.orders", {"table": True, "domain": ["ecommerce"]}),
        f"{ORDERS}: meta.dptool.domain is [ecommerce]; expected text",
    ),
    "model_key_misspelt": (
        lambda m: set_dptool(m, f"model.{PROJECT}.orders", {"tabel": True}),
        f"{ORDERS}: meta.dptool.tabel is not a model key (table, domain, metric, data_product, task, semantic, "
        "column_provenance)",
    ),
    "rule_on_a_model": (
        lambda m: edit_dptool(m, f"model.{PROJECT}.orders", lambda d: d.update(rule={"type": "temporal"})),
        f"{ORDERS}: meta.dptool.rule is not a model key (table, domain, metric, data_product, task, semantic, "
        "column_provenance)",
    ),
    "metric_is_text": (
        lambda m: edit_dptool(m, f"model.{PROJECT}.gmv", lambda d: d.update(metric="sum(price)")),
        f"{GMV}: meta.dptool.metric is 'sum(price)'; expected a mapping with at least `value`",
    ),
    # data products
    "data_product_text": (
        lambda m: set_dptool(m, f"model.{PROJECT}.dp_delivery_performance", {"data_product": "x"}),
        f"{DELIVERY_DP}: meta.dptool.data_product is 'x'; expected a mapping {{id, request, questions}}",
    ),
    "data_product_id_a_mapping": (
        lambda m: edit_dptool(m, f"model.{PROJECT}.dp_delivery_performance",
                              lambda d: d["data_product"].update(id={"a": 1})),
        f"{DELIVERY_DP}: meta.dptool.data_product.id is {{a: 1}}; expected text",
    ),
    "data_product_question_without_sql": (
        lambda m: edit_question(m, lambda q: q.pop("sql")),
        f"{DELIVERY_DP}: meta.dptool.data_product.questions[0].sql is missing (the query over the tables that "
        "answers it)",
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


def test_what_a_careless_yaml_still_means(demo_manifest):
    """Numbers where text is meant read as text; `dimension: false` keeps a column out of the dimensions."""
    manifest = copy.deepcopy(demo_manifest)
    edit_metric(manifest, "gmv", lambda d: d.update(tier=1, unit=""))
    edit_column(manifest, "orders", "order_status", lambda d: d.update(dimension=False))
    loaded = load_catalog(manifest)
    assert (loaded.metrics["gmv"].tier, loaded.metrics["gmv"].unit) == ("1", "")
    assert f"model.{PROJECT}.orders.order_status" not in loaded.dimensions
    assert f"model.{PROJECT}.orders.order_purchase_timestamp" in loaded.dimensions


def test_new_metric_keys_come_from_the_catalog(demo_manifest, monkeypatch):
    """A key the catalog lists and this schema does not type is accepted as it is (another branch adds keys)."""
    manifest = copy.deepcopy(demo_manifest)
    edit_metric(manifest, "gmv", lambda d: d.update(owner={"any": "shape"}))
    with pytest.raises(DptoolError, match=r"meta\.dptool\.metric\.owner is not a metric key"):
        load_catalog(manifest)
    monkeypatch.setattr(catalog, "METRIC_KEYS", (*catalog.METRIC_KEYS, "owner"))
    assert "gmv" in load_catalog(manifest).metrics


def test_one_list_of_choices():
    """The schema's choices are the ones the rest of dptool checks and scaffolds."""
    assert declarations.DIMENSION_KINDS == catalog.DIMENSION_KINDS
    assert declarations.RULE_TYPES == catalog.RULE_TYPES == scaffold.RULE_TYPES
    assert declarations.METRIC_FORMATS == catalog.METRIC_FORMATS == semantic.METRIC_FORMATS
    assert tuple(declarations.METRIC.keys) == catalog.METRIC_KEYS
    assert tuple(declarations.RULE.keys) == catalog.RULE_KEYS


# --- the dbt semantic layer: what dptool adds there -------------------------------------------------------------

SEMANTIC_YML = "models/sales/_semantic.yml"


def _with_semantic_layer(metric_meta: dict | None = None, dimension_meta: dict | None = None) -> dict:
    """The hand-written shop manifest with one semantic model and one metric, in the shape dbt writes them."""
    manifest = shop_manifest()
    manifest["semantic_models"] = {"semantic_model.shop.orders": {
        "name": "orders", "resource_type": "semantic_model", "unique_id": "semantic_model.shop.orders",
        "original_file_path": SEMANTIC_YML, "model": "ref('orders')",
        "depends_on": {"nodes": ["model.shop.orders"], "macros": []},
        "entities": [{"name": "order", "type": "primary", "expr": "order_id"}],
        "dimensions": [{"name": "status", "type": "categorical", "config": {"meta": dimension_meta or {}}}],
        "measures": [{"name": "order_count", "agg": "count", "expr": "1"}],
    }}
    manifest["metrics"] = {"metric.shop.order_count": {
        "name": "order_count", "resource_type": "metric", "unique_id": "metric.shop.order_count",
        "original_file_path": SEMANTIC_YML, "type": "simple", "label": "Orders",
        "type_params": {"measure": {"name": "order_count"}}, "config": {"meta": metric_meta or {}},
    }}
    return manifest


def test_semantic_layer_as_given_loads():
    assert "order_count" in load_catalog(_with_semantic_layer()).metrics


def test_semantic_metric_label_a_mapping():
    manifest = _with_semantic_layer(metric_meta={"dptool": {"metric": {"label": {"a": "b"}}}})
    with pytest.raises(DptoolError) as info:
        load_catalog(manifest)
    assert str(info.value) == (f"{SEMANTIC_YML}: metric.shop.order_count: meta.dptool.metric.label is {{a: b}}; "
                               "expected text (the metric's name in questions, e.g. Average Delivery Time)")


def test_semantic_dimension_dptool_is_text():
    manifest = _with_semantic_layer(dimension_meta={"dptool": "spatial"})
    with pytest.raises(DptoolError) as info:
        load_catalog(manifest)
    assert str(info.value) == (f"{SEMANTIC_YML}: semantic_model.shop.orders: dimensions.status.config.meta.dptool "
                               "is 'spatial'; expected a mapping of dptool's keys, e.g. {table: true}")


# --- the manifest itself ----------------------------------------------------------------------------------------

REWRITE = "run `dbt parse` to write it again"
MANIFESTS = {
    "a_list": ([], f"target/manifest.json: not a dbt manifest: it holds [], where dbt writes a mapping of nodes, "
                   f"sources and macros; {REWRITE}"),
    "null": (None, f"target/manifest.json: not a dbt manifest: it holds null, where dbt writes a mapping of nodes, "
                   f"sources and macros; {REWRITE}"),
    "node_a_string": ({"nodes": {"model.shop.orders": "orders"}},
                      f"target/manifest.json: nodes['model.shop.orders'] is 'orders'; expected a mapping "
                      f"(a dbt node); {REWRITE}"),
    "nodes_a_list": ({"nodes": []}, f"target/manifest.json: nodes is []; expected a mapping of unique id to node; "
                                    f"{REWRITE}"),
    "columns_a_list": ({"nodes": {"model.shop.orders": {"name": "orders", "columns": ["id"]}}},
                       f"target/manifest.json: nodes['model.shop.orders']: columns is [id]; expected a mapping of "
                       f"column name to column; {REWRITE}"),
    "node_without_name": ({"macros": {"macro.shop.x": {"meta": {}}}},
                          f"target/manifest.json: macros['macro.shop.x']: name is missing; expected text; {REWRITE}"),
    "metadata_a_number": ({"metadata": 5}, f"target/manifest.json: metadata is 5; expected a mapping; {REWRITE}"),
}


@pytest.mark.parametrize("case", list(MANIFESTS))
def test_malformed_manifest(case):
    manifest, message = MANIFESTS[case]
    with pytest.raises(DptoolError) as info:
        load_catalog(manifest, "target/manifest.json")
    assert str(info.value) == message


def test_manifest_shape_checked_where_it_is_read(tmp_path, demo_project):
    """Every command reads the manifest through DbtProject.load_manifest: a wrong shape stops there."""
    root = tmp_path / "project"
    (root / "target").mkdir(parents=True)
    shutil.copy2(demo_project.project_dir / "dbt_project.yml", root / "dbt_project.yml")
    (root / "target" / "manifest.json").write_text("[]", encoding="utf-8")
    with pytest.raises(DptoolError, match=r"manifest\.json: not a dbt manifest: it holds \[\]"):
        DbtProject(root).load_manifest()


# --- joins: a relationships test to a model that does not exist -------------------------------------------------


@pytest.fixture(scope="module")
def missing_parent_manifest(demo_project, tmp_path_factory) -> dict:
    """`dbt parse` of the demo project after orders.customer_id's relationships test was pointed at a typo."""
    root = tmp_path_factory.mktemp("missing_parent") / "project"
    shutil.copytree(demo_project.project_dir, root, ignore=shutil.ignore_patterns("*.duckdb", "*.duckdb.wal", "logs"))
    tables = root / TABLES_YML
    text = tables.read_text(encoding="utf-8")
    assert text.count("{to: ref('customers'), field: customer_id}") == 1
    tables.write_text(text.replace("{to: ref('customers'), field: customer_id}",
                                   "{to: ref('customerz'), field: customer_id}"), encoding="utf-8")
    project = DbtProject(root)
    project.run("parse")
    return json.loads(project.manifest_path.read_text(encoding="utf-8"))


MISSING_PARENT = (f"{TABLES_YML}: model.{PROJECT}.orders: columns.customer_id: the relationships test's "
                  "`to: ref('customerz')` names no model, seed, snapshot or source of the project; dbt disabled the "
                  "test, and with it the join dptool reads from it: fix `to`, or remove the test")


def _typo_test(manifest: dict) -> tuple[str, dict]:
    """Where dbt filed the test: among the nodes, disabled (a full parse), or under `disabled` (a partial one)."""
    found = [(uid, n) for uid, n in manifest["nodes"].items() if "customerz" in uid]
    found += [(uid, n) for uid, versions in manifest.get("disabled", {}).items() if "customerz" in uid
              for n in versions]
    assert len(found) == 1
    return found[0]


def test_relationships_to_a_missing_model(missing_parent_manifest):
    """dbt only warns and disables the test: the orders -> customers join would vanish without a word."""
    _, test = _typo_test(missing_parent_manifest)
    assert test["config"]["enabled"] is False
    with pytest.raises(DptoolError) as info:
        load_catalog(missing_parent_manifest)
    assert str(info.value) == MISSING_PARENT


def test_relationships_to_a_missing_model_other_parse(missing_parent_manifest):
    """The test filed where dbt's other kind of parse files it (nodes <-> disabled): the same line."""
    manifest = copy.deepcopy(missing_parent_manifest)
    uid, test = _typo_test(manifest)
    if manifest["nodes"].pop(uid, None) is not None:
        manifest.setdefault("disabled", {})[uid] = [test]
    else:
        del manifest["disabled"][uid]
        manifest["nodes"][uid] = test
    with pytest.raises(DptoolError) as info:
        load_catalog(manifest)
    assert str(info.value) == MISSING_PARENT


def test_relationships_test_the_user_disabled(missing_parent_manifest):
    """A test the user disabled (`config: {enabled: false}`, which dbt keeps in its unrendered config) is theirs:
    no error, and no join."""
    manifest = copy.deepcopy(missing_parent_manifest)
    _, test = _typo_test(manifest)
    test["unrendered_config"] = {**(test.get("unrendered_config") or {}), "enabled": False}
    loaded = load_catalog(manifest)
    assert not any(j.from_column == "customer_id" and j.from_table.endswith(".orders") for j in loaded.joins)


def test_relationships_to_a_disabled_model(missing_parent_manifest):
    """The model is there, disabled (`enabled: false`): dbt disables the test all the same, and the line says so."""
    manifest = copy.deepcopy(missing_parent_manifest)
    _, test = _typo_test(manifest)
    for ref in test["refs"]:
        if ref["name"] == "customerz":
            ref["name"] = "customers"
    test["test_metadata"]["kwargs"]["to"] = "ref('customers')"
    customers = manifest["nodes"].pop(f"model.{PROJECT}.customers")
    manifest.setdefault("disabled", {})[customers["unique_id"]] = [{**customers, "config": {"enabled": False}}]
    with pytest.raises(DptoolError) as info:
        load_catalog(manifest)
    assert str(info.value) == (f"{TABLES_YML}: model.{PROJECT}.orders: columns.customer_id: the relationships "
                               "test's `to: ref('customers')` names a disabled model; dbt disabled the test, and with "
                               "it the join dptool reads from it: enable it, or remove the test")
