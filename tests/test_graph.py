"""Stage 2: the artifact linkage graph (DI-Bench Table 2)."""

from __future__ import annotations

import json
from pathlib import Path

from dptool.generate.graph import EDGE_TYPES, NODE_TYPES, build_graph, graph_stats, graph_to_json
from dptool.project.catalog import load_catalog

FIXTURES = Path(__file__).parent / "fixtures"


def shop_catalog():
    return load_catalog(json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8")))


def test_types_are_di_bench_table_2():
    assert NODE_TYPES == ("table", "metric", "rule", "dimension")
    assert EDGE_TYPES == ("metric_table", "table_dimension", "table_table", "rule_metric", "metric_metric",
                          "rule_dimension")


def test_demo_stats(demo_catalog):
    # a rule of a component governs its composite through the metric -> metric edges, not an edge of its own
    assert graph_stats(build_graph(demo_catalog.subset("ecommerce"))) == {
        "nodes": 65,
        "edges": 183,
        "nodes_by_type": {"table": 8, "metric": 31, "rule": 18, "dimension": 8},
        "edges_by_type": {"metric_table": 119, "table_dimension": 8, "table_table": 7, "rule_metric": 36,
                          "metric_metric": 9, "rule_dimension": 4},
    }


def test_demo_has_every_edge_type(demo_catalog):
    g = build_graph(demo_catalog)
    assert {k for _, _, k in g.edges(keys=True)} == set(EDGE_TYPES)
    assert {d["type"] for _, d in g.nodes(data=True)} == set(NODE_TYPES)


def test_edges_connect_the_declared_types(demo_catalog):
    g = build_graph(demo_catalog)
    ends = {(g.nodes[u]["type"], g.nodes[v]["type"], k) for u, v, k in g.edges(keys=True)}
    assert ends == {
        ("metric", "table", "metric_table"),
        ("table", "dimension", "table_dimension"),
        ("table", "table", "table_table"),
        ("rule", "metric", "rule_metric"),
        ("metric", "metric", "metric_metric"),
        ("rule", "dimension", "rule_dimension"),
    }


def test_demo_json_snippet(demo_catalog):
    graph = json.loads(graph_to_json(build_graph(demo_catalog.subset("ecommerce"))))
    snippet = {
        "nodes": [n for n in graph["nodes"] if n["id"] == "rule:sao_paulo_approval_clock"],
        "edges": [e for e in graph["edges"]
                  if e["source"] == "rule:sao_paulo_approval_clock" or e["type"] == "metric_metric"],
    }
    assert snippet == json.loads((FIXTURES / "demo_graph_snippet.json").read_text(encoding="utf-8"))


def test_json_identical_across_builds(demo_manifest):
    first = graph_to_json(build_graph(load_catalog(demo_manifest)))
    second = graph_to_json(build_graph(load_catalog(demo_manifest)))
    assert first.encode("utf-8") == second.encode("utf-8")
    assert '"label": "São Paulo Approval Clock Override"' in first  # not escaped to \u00e3


def test_shop_json():
    assert graph_to_json(build_graph(shop_catalog())) == (FIXTURES / "shop_graph.json").read_text(encoding="utf-8")


def test_json_independent_of_declaration_order():
    manifest = json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8"))
    manifest["nodes"] = dict(reversed(list(manifest["nodes"].items())))
    manifest["macros"] = dict(reversed(list(manifest["macros"].items())))
    assert graph_to_json(build_graph(load_catalog(manifest))) == graph_to_json(build_graph(shop_catalog()))


def test_node_attributes():
    g = build_graph(shop_catalog())
    assert g.nodes["dimension:model.shop.orders.ordered_at"] == {
        "type": "dimension", "label": "orders.ordered_at", "kind": "temporal", "domain": "sales"}
    assert g.nodes["rule:capital_override"]["rule_type"] == "override"
    assert g.get_edge_data("rule:capital_override", "dimension:model.shop.customers.state") == {
        "rule_dimension": {"value": "DF"}}
    assert g.get_edge_data("table:model.shop.payments", "table:model.shop.orders") == {
        "table_table": {"on": "order_id=order_id"}}
