"""Stage 2: the artifact linkage graph of DI-Bench (Table 2): four node types, six edge types."""

from __future__ import annotations

import json
from collections import Counter

import networkx as nx

from dptool.project.catalog import Catalog

NODE_TYPES = ("table", "metric", "rule", "dimension")
EDGE_TYPES = (
    "metric_table",  # metric formula uses columns from table
    "table_dimension",  # table has a column usable as a filter or grouping
    "table_table",  # tables can be joined
    "rule_metric",  # rule document changes the metric's computed answer
    "metric_metric",  # composite metric uses another as a component
    "rule_dimension",  # rule applies only when a dimension takes a value
)


def node_id(kind: str, key: str) -> str:
    return f"{kind}:{key}"


def build_graph(catalog: Catalog) -> nx.MultiDiGraph:
    """The linkage graph; node ids are `<type>:<key>` with keys as in the catalog."""
    g = nx.MultiDiGraph()
    for uid, table in sorted(catalog.tables.items()):
        g.add_node(node_id("table", uid), type="table", label=table.name, domain=table.domain)
    for dim_id, dim in sorted(catalog.dimensions.items()):
        table = catalog.tables[dim.table]
        g.add_node(node_id("dimension", dim_id), type="dimension", label=f"{table.name}.{dim.column}",
                   kind=dim.kind, domain=table.domain)
        g.add_edge(node_id("table", dim.table), node_id("dimension", dim_id), key="table_dimension")
    for join in catalog.joins:
        g.add_edge(node_id("table", join.from_table), node_id("table", join.to_table), key="table_table",
                   on=f"{join.from_column}={join.to_column}")
    for mid, metric in sorted(catalog.metrics.items()):
        g.add_node(node_id("metric", mid), type="metric", label=metric.label, domain=metric.domain, tier=metric.tier)
    for mid, metric in sorted(catalog.metrics.items()):
        for table in metric.tables:
            g.add_edge(node_id("metric", mid), node_id("table", table), key="metric_table")
        for component in metric.components:
            g.add_edge(node_id("metric", mid), node_id("metric", component), key="metric_metric")
    for rid, rule in sorted(catalog.rules.items()):
        g.add_node(node_id("rule", rid), type="rule", label=rule.title, rule_type=rule.type, domain=rule.domain)
        for mid in rule.modifies:
            g.add_edge(node_id("rule", rid), node_id("metric", mid), key="rule_metric")
        # the dimension a condition names is a column of a table under the metrics the rule modifies
        tables = {t for mid in rule.modifies for t in catalog.metrics[mid].tables}
        for column, value in sorted(rule.applies_when.items()):
            for dim_id, dim in sorted(catalog.dimensions.items()):
                if dim.column == column and dim.table in tables:
                    g.add_edge(node_id("rule", rid), node_id("dimension", dim_id), key="rule_dimension", value=value)
    return g


def graph_stats(g: nx.MultiDiGraph) -> dict:
    """Counts of nodes and edges by type (for the card, beside DI-Bench Appendix H)."""
    nodes = Counter(data["type"] for _, data in g.nodes(data=True))
    edges = Counter(key for _, _, key in g.edges(keys=True))
    return {
        "nodes": g.number_of_nodes(),
        "edges": g.number_of_edges(),
        "nodes_by_type": {t: nodes.get(t, 0) for t in NODE_TYPES},
        "edges_by_type": {t: edges.get(t, 0) for t in EDGE_TYPES},
    }


def graph_to_json(g: nx.MultiDiGraph) -> str:
    """A stable node-link JSON: sorted nodes and edges, so the same graph gives the same bytes."""
    nodes = [{"id": n, **{k: v for k, v in sorted(d.items())}} for n, d in sorted(g.nodes(data=True))]
    edges = sorted(
        ({"source": u, "target": v, "type": k, **{a: b for a, b in sorted(d.items())}}
         for u, v, k, d in g.edges(keys=True, data=True)),
        key=lambda e: (e["type"], e["source"], e["target"]),
    )
    return json.dumps({"stats": graph_stats(g), "nodes": nodes, "edges": edges}, indent=2, ensure_ascii=False) + "\n"
