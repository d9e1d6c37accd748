"""A picture of the artifact linkage graph for a person: SVG, or an HTML page around it.

Layered, not force-directed: rules, metrics, tables and dimensions stand in four columns, so the same
graph always gives the same picture and every edge reads left to right (or as an arc inside a column).
"""

from __future__ import annotations

from html import escape

import networkx as nx

from dptool.generate.graph import EDGE_TYPES, NODE_TYPES, graph_stats

COLUMNS = ("rule", "metric", "table", "dimension")
COLOURS = {"rule": "#d1495b", "metric": "#2e86ab", "table": "#3b9a57", "dimension": "#edae49"}
EDGE_COLOURS = {"metric_table": "#2e86ab", "table_dimension": "#3b9a57", "table_table": "#3b9a57",
                "rule_metric": "#d1495b", "metric_metric": "#2e86ab", "rule_dimension": "#d1495b"}
ROW, COL, TOP, LEFT, RADIUS = 22, 330, 70, 40, 6


def layout(g: nx.MultiDiGraph) -> dict[str, tuple[float, float]]:
    """x by node type, y by domain then label: a stable position for every node."""
    pos = {}
    for i, kind in enumerate(COLUMNS):
        nodes = sorted((n for n, d in g.nodes(data=True) if d["type"] == kind),
                       key=lambda n: (g.nodes[n].get("domain", ""), g.nodes[n].get("label", n), n))
        for j, n in enumerate(nodes):
            pos[n] = (LEFT + i * COL, TOP + j * ROW)
    return pos


def draw_svg(g: nx.MultiDiGraph, title: str = "Artifact linkage graph") -> str:
    """The graph as a standalone SVG document."""
    pos = layout(g)
    height = TOP + ROW * max((sum(1 for _, d in g.nodes(data=True) if d["type"] == k) for k in COLUMNS),
                             default=1) + 40
    width = LEFT + COL * len(COLUMNS) + 120
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
             f'height="{height}" font-family="Helvetica, Arial, sans-serif" font-size="11">',
             f"<title>{escape(title)}</title>",
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="{LEFT}" y="24" font-size="16" font-weight="bold">{escape(title)}</text>']
    for i, kind in enumerate(COLUMNS):
        count = sum(1 for _, d in g.nodes(data=True) if d["type"] == kind)
        parts.append(f'<text x="{LEFT + i * COL - RADIUS}" y="50" font-weight="bold" fill="{COLOURS[kind]}">'
                     f"{kind}s ({count})</text>")
    for u, v, key in sorted(g.edges(keys=True)):
        (x1, y1), (x2, y2) = pos[u], pos[v]
        colour = EDGE_COLOURS[key]
        if x1 == x2:  # same column: an arc to the right
            bulge = 40 + abs(y2 - y1) / 6
            path = f"M{x1},{y1} C{x1 + bulge},{y1} {x2 + bulge},{y2} {x2},{y2}"
        else:
            mid = (x1 + x2) / 2
            path = f"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}"
        parts.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-opacity="0.35" stroke-width="1">'
                     f"<title>{escape(key)}: {escape(u)} → {escape(v)}</title></path>")
    for n, d in sorted(g.nodes(data=True)):
        x, y = pos[n]
        tip = escape(f"{n} ({d.get('domain', '')})")
        parts.append(f'<g><title>{tip}</title><circle cx="{x}" cy="{y}" r="{RADIUS}" fill="{COLOURS[d["type"]]}"/>'
                     f'<text x="{x + 10}" y="{y + 4}">{escape(_short(d.get("label", n)))}</text></g>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def draw_html(g: nx.MultiDiGraph, title: str = "Artifact linkage graph") -> str:
    """An HTML page: counts by node and edge type, a legend, and the SVG (hover for ids)."""
    stats = graph_stats(g)
    legend = "".join(f'<span class="key"><span class="dot" style="background:{COLOURS[k]}"></span>{k}</span>'
                     for k in NODE_TYPES)
    rows = "".join(f"<tr><td>{k}</td><td>{stats['edges_by_type'][k]}</td></tr>" for k in EDGE_TYPES)
    nodes = "".join(f"<tr><td>{k}</td><td>{stats['nodes_by_type'][k]}</td></tr>" for k in NODE_TYPES)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>
body {{ font-family: Helvetica, Arial, sans-serif; margin: 24px; color: #222; }}
.key {{ margin-right: 18px; }} .dot {{ display: inline-block; width: 10px; height: 10px; border-radius: 5px;
margin-right: 6px; }}
table {{ border-collapse: collapse; margin: 12px 24px 12px 0; display: inline-table; vertical-align: top; }}
td, th {{ border-bottom: 1px solid #ddd; padding: 2px 10px; text-align: left; }}
</style></head><body>
<h1>{escape(title)}</h1>
<p>{stats['nodes']} nodes, {stats['edges']} edges. {legend}</p>
<table><tr><th>node type</th><th>count</th></tr>{nodes}</table>
<table><tr><th>edge type</th><th>count</th></tr>{rows}</table>
{draw_svg(g, title)}
</body></html>
"""


def _short(text: str, width: int = 38) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
