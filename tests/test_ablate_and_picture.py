"""The pairing ablation on the demo bundle, and the graph picture."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

from dptool.generate.graph import build_graph
from dptool.generate.graph_draw import COLOURS, draw_html, draw_svg
from dptool.project.warehouse import Warehouse
from tests.conftest import run_cli


def test_pairing_ablation_puts_its_table_in_the_card(demo_project, demo_bundle, tmp_path):
    bundle = tmp_path / "bundle"
    shutil.copytree(demo_bundle[0], bundle)
    proc = run_cli("ablate", "pairing", "--project-dir", str(demo_project.project_dir), "--limit", "4", str(bundle))
    assert proc.returncode == 0, proc.stderr
    # progress as generate shows it: a stage line, then the bar (its label alone when stderr is no terminal)
    assert proc.stdout.startswith("[ablate] dbt compile of 12 pairings (4 rule tasks, 3 rules each), their SQL run on "
                                  "the target\n"), proc.stdout
    assert "  pairings" in proc.stderr
    result = json.loads((bundle / "ablation.json").read_text(encoding="utf-8"))
    graph, similar, rand = (result["strategies"][s] for s in ("graph", "similar text", "random"))
    assert graph["pairings"] == similar["pairings"] == rand["pairings"] == 4
    # the graph's own rule is the one whose rule test passed at generation: it always changes the answer
    assert graph["share"] == 1.0
    assert similar["share"] <= 1.0 and rand["share"] <= 1.0
    card = (bundle / "card.md").read_text(encoding="utf-8")
    assert card.count("## Pairing ablation (DI-Bench Table 8)") == 1
    assert "| graph | 4 | 4 | 100.0% |" in card
    assert not (demo_project.project_dir / "models" / "dptool_ablation").exists()
    # nothing built: no schema of pairings left in the user's warehouse (issue 28: 179-212 tables in dptool_ablation)
    with Warehouse.of(demo_project.connection()) as wh:
        _, rows = wh.query("select table_schema, count(*) from information_schema.tables "
                           "where table_schema like '%dptool_ablation%' group by 1")
    assert rows == []


def test_svg_draws_every_node_coloured_by_type(demo_catalog):
    g = build_graph(demo_catalog)
    svg = draw_svg(g)
    root = ET.fromstring(svg)
    circles = root.findall(".//{http://www.w3.org/2000/svg}circle")
    assert len(circles) == g.number_of_nodes()
    assert {c.get("fill") for c in circles} == set(COLOURS.values())
    assert len(root.findall(".//{http://www.w3.org/2000/svg}path")) == g.number_of_edges()
    assert draw_svg(g) == svg  # the same graph, the same picture


def test_html_page_holds_counts_and_the_picture(demo_catalog):
    page = draw_html(build_graph(demo_catalog), "demo")
    assert page.startswith("<!doctype html>") and "<svg" in page and "rule_metric" in page
