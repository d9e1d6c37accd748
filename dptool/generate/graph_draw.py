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
ROW, COL, TOP, LEFT, RADIUS = 22, 320, 70, 40, 6
CHAR = 6.3  # the width of a character of 11 px Helvetica, generous: an edge starts past the end of its label
LABEL = 38  # characters of a label at most; longer ones end in "…" (the id is in the node's tooltip)


def layout(g: nx.MultiDiGraph) -> dict[str, tuple[float, float]]:
    """x by node type, y by domain then label: a stable position for every node."""
    pos = {}
    for i, kind in enumerate(COLUMNS):
        nodes = sorted((n for n, d in g.nodes(data=True) if d["type"] == kind),
                       key=lambda n: (g.nodes[n].get("domain", ""), g.nodes[n].get("label", n), n))
        for j, n in enumerate(nodes):
            pos[n] = (LEFT + i * COL, TOP + j * ROW)
    return pos


def _label_end(g: nx.MultiDiGraph, n: str, x: float) -> float:
    """Where node n's label ends: edges leave from there, so no edge is drawn across a label."""
    return x + RADIUS + 4 + CHAR * len(_short(g.nodes[n].get("label", n))) + 4


def _edge_path(g, pos, ends, u, v) -> str:
    """An edge that crosses no label: out of u's label end to the gutter right of u's column (past its longest
    label), then into v's dot; an edge to a column beyond the next runs along the gap between two rows of the
    columns it passes; an edge within a column arcs inside the gutter."""
    (x1, y1), (x2, y2) = pos[u], pos[v]
    start = _label_end(g, u, x1)
    gutter = ends[x1] + 8  # right of every label of u's column
    if x1 == x2:
        end = _label_end(g, v, x2)
        bulge = gutter + min(8 + abs(y2 - y1) / 6, COL - (ends[x1] - x1) - 24)
        return (f"M{start:.1f},{y1} L{gutter:.1f},{y1} C{bulge:.1f},{y1} {bulge:.1f},{y2} {gutter:.1f},{y2} "
                f"L{end:.1f},{y2}")
    end = x2 - RADIUS
    if x2 - x1 <= COL:  # the next column
        mid = (gutter + end) / 2
        return f"M{start:.1f},{y1} L{gutter:.1f},{y1} C{mid:.1f},{y1} {mid:.1f},{y2} {end:.1f},{y2}"
    lane = y2 + ROW / 2  # below v's row: the gap between two rows holds no label in any column
    near = x2 - RADIUS - 14  # the gutter left of v's column
    return (f"M{start:.1f},{y1} L{gutter:.1f},{y1} C{gutter + 12:.1f},{y1} {gutter + 12:.1f},{lane} "
            f"{gutter + 24:.1f},{lane} L{near - 10:.1f},{lane} C{near:.1f},{lane} {near:.1f},{y2} {end:.1f},{y2}")


def draw_svg(g: nx.MultiDiGraph, title: str = "Artifact linkage graph") -> str:
    """The graph as a standalone SVG document, edges clear of every label (see `_edge_path`)."""
    pos = layout(g)
    rows = max((sum(1 for _, d in g.nodes(data=True) if d["type"] == k) for k in COLUMNS), default=1)
    height = TOP + ROW * rows + 40
    ends: dict[float, float] = {}
    for n, (x, _) in pos.items():
        ends[x] = max(ends.get(x, x), _label_end(g, n, x))
    width = int(max([LEFT + COL * (len(COLUMNS) - 1) + 60, *ends.values()]) + 10.5)
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
        parts.append(f'<path class="edge e-{key}" d="{_edge_path(g, pos, ends, u, v)}" fill="none" '
                     f'stroke="{EDGE_COLOURS[key]}" stroke-opacity="0.35" stroke-width="1">'
                     f"<title>{escape(key)}: {escape(u)} → {escape(v)}</title></path>")
    for n, d in sorted(g.nodes(data=True)):
        x, y = pos[n]
        tip = escape(f"{n} ({d.get('domain', '')})")
        parts.append(f'<g><title>{tip}</title><circle cx="{x}" cy="{y}" r="{RADIUS}" fill="{COLOURS[d["type"]]}"/>'
                     f'<text class="label" x="{x + RADIUS + 4}" y="{y + 4}">{escape(_short(d.get("label", n)))}'
                     "</text></g>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def draw_html(g: nx.MultiDiGraph, title: str = "Artifact linkage graph") -> str:
    """An HTML page: counts by node and edge type, a legend, and the SVG (hover for ids), as wide as the window.
    The metric→table edges, most of the picture's edges and the least read, are shown only on request."""
    stats = graph_stats(g)
    legend = "".join(f'<span class="key"><span class="dot" style="background:{COLOURS[k]}"></span>{k}</span>'
                     for k in NODE_TYPES)
    rows = "".join(f"<tr><td>{k}</td><td>{stats['edges_by_type'][k]}</td></tr>" for k in EDGE_TYPES)
    nodes = "".join(f"<tr><td>{k}</td><td>{stats['nodes_by_type'][k]}</td></tr>" for k in NODE_TYPES)
    tables = stats["edges_by_type"].get("metric_table", 0)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>
body {{ font-family: Helvetica, Arial, sans-serif; margin: 24px; color: #222; }}
.key {{ margin-right: 18px; }} .dot {{ display: inline-block; width: 10px; height: 10px; border-radius: 5px;
margin-right: 6px; }}
table {{ border-collapse: collapse; margin: 12px 24px 12px 0; display: inline-table; vertical-align: top; }}
td, th {{ border-bottom: 1px solid #ddd; padding: 2px 10px; text-align: left; }}
svg {{ max-width: 100%; height: auto; display: block; }}
body:not(.metric-tables) .e-metric_table {{ display: none; }}
</style></head><body>
<h1>{escape(title)}</h1>
<p>{stats['nodes']} nodes, {stats['edges']} edges. {legend}</p>
<table><tr><th>node type</th><th>count</th></tr>{nodes}</table>
<table><tr><th>edge type</th><th>count</th></tr>{rows}</table>
<p><label><input type="checkbox" id="metric-tables"
  onchange="document.body.classList.toggle('metric-tables', this.checked)">
show the {tables} metric → table edges (which tables each metric reads)</label></p>
{draw_svg(g, title)}
</body></html>
"""


def _short(text: str, width: int = LABEL) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
