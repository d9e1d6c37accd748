"""Real data that does not break the user's path, on the corner_shop fixture project (tests/fixtures/corner_shop).

The fixture holds what the demo does not: a DECIMAL dimension (`price_band`, like jaffle-shop's
`order_total_dim`) and a rule that finds nothing to change in its data (no order was ever refunded). It is
copied, set up with `dptool init`, `dbt deps` and `dbt build`, then `dptool generate` runs from the command line.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
import yaml

from dptool.project.dbt import DbtProject
from tests.conftest import run_cli

FIXTURE = Path(__file__).parent / "fixtures" / "corner_shop"
IGNORED = shutil.ignore_patterns("target", "dbt_packages", "logs", "*.duckdb", "*.duckdb.wal", "dptool_gold",
                                 "packages.yml", "package-lock.yml", "bundle", "__pycache__")


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """(project, results of `dbt build`, the `dptool generate` process, the bundle)."""
    root = tmp_path_factory.mktemp("corner_shop") / "project"
    shutil.copytree(FIXTURE, root, ignore=IGNORED)
    proc = run_cli("init", "--project-dir", str(root))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    project = DbtProject(root)
    project.run("deps")
    results = project.run("build")
    out = root / "bundle"
    proc = run_cli("generate", "--project-dir", str(root), "--out", str(out), "--target", "30",
                   "--min-per-type", "0")
    return project, results, proc, out


def test_a_rule_with_nothing_to_change_warns_and_the_build_goes_on(shop):
    _, results, _, _ = shop
    by_status = {r.unique_id: r.status for r in results}
    warned = [uid for uid, status in by_status.items() if status == "warn"]
    assert len(warned) == 1 and "rule_changes_answer_avg_order_amount__rule_variants" in warned[0]
    assert not [uid for uid, status in by_status.items() if status not in ("success", "pass", "warn")]


def test_generate_writes_a_bundle_with_a_decimal_dimension(shop):
    project, _, proc, out = shop
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    decimal = [t for t in tasks if t["dimension"] == "price_band"]
    kinds = {t["analysis_type"] for t in decimal}
    assert {"point_query", "comparison", "ranking", "decomposition"} <= kinds, kinds
    bands = {9.99, 19.99, 24.5, 49.95, 12.35, 99}
    for t in decimal:
        for value in [t["slice"].get("price_band"), *t["slice"].get("groups", [])]:
            assert value is None or value in bands, t["task_id"]
    # the gold models' properties hold the same plain values (YAML could not write a Decimal)
    properties = yaml.safe_load((project.project_dir / "models" / "dptool_gold" / "_dptool_gold.yml").read_text(
        encoding="utf-8"))
    gold_models = [m for m in properties["models"] if m["name"] != "dptool_tasks"]  # not the overview model
    slices = [m["config"]["meta"]["dptool"]["task"]["slice"] for m in gold_models
              if m["config"]["meta"]["dptool"]["task"]["dimension"] == "price_band"]
    assert len(slices) == len(decimal)
    assert {v for s in slices for v in [s.get("price_band"), *s.get("groups", [])] if v is not None} <= bands
    # and each stored SQL reproduces its gold on the bundle's warehouse
    con = duckdb.connect(str(out / "warehouse.duckdb"), read_only=True)
    try:
        for t in decimal:
            assert con.execute(t["gold_sql"]).fetchall(), t["task_id"]
    finally:
        con.close()


def test_the_card_lists_the_rule_that_changes_nothing(shop):
    _, _, proc, out = shop
    card = (out / "card.md").read_text(encoding="utf-8")
    assert "### Rules that change nothing on this data" in card
    assert "- Refund Exclusion (`exclude_refunds`) leaves Average Order Amount (`avg_order_amount`) unchanged" in card
    assert "exclude_refunds -> avg_order_amount" in proc.stdout
    assert "### Drops by reason" in card


def test_kb_states_the_period_of_each_metric(shop):
    _, _, _, out = shop
    (path,) = (out / "kb").glob("*/metrics.md")  # one domain, one folder of its own
    text = path.read_text(encoding="utf-8")
    assert "- Period: `ordered_at` — The day the order was placed." in text
    assert "- Row grain: orders" in text
