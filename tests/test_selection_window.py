"""Selection windows: a metric whose definition selects members (a top k, the active ones, a first order) states the
window of the selection (meta.dptool.metric.selection); the kb and every question on it say it, and a metric that
visibly selects without one gets no task, in one line naming its node and the key to add.

On a hand-made manifest (tests/fixtures/shop_manifest.json) and, end to end, on a copy of the corner_shop fixture
project with two top-k metrics added: one with a window, one without."""

from __future__ import annotations

import copy
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from dptool.errors import DptoolError
from dptool.generate.export import write_domain_kb
from dptool.generate.phrase import selection_clause
from dptool.project.catalog import SELECTION_WINDOWS, load_catalog
from dptool.project.dbt import DbtProject
from dptool.project.selects import selection_cue, unwindowed
from tests.conftest import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
TOP_K = {"label": "Top-3 City Share",
         "value": "sum(case when city_value_rank <= 3 then amount else 0 end) / sum(amount)", "format": "percent",
         "formula": "SUM(amount of the top 3 cities) / SUM(amount)", "grain": "orders"}
WINDOW = {"members": "the top three cities by amount paid", "window": "history"}


def _manifest(decl: dict) -> dict:
    """The shop manifest with a second metric model, `city_share`, declaring `decl`."""
    manifest = json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8"))
    node = copy.deepcopy(manifest["nodes"]["model.shop.avg_order_value"])
    node.update(unique_id="model.shop.city_share", name="city_share", alias="city_share", description="",
                original_file_path="models/sales/metrics/city_share.sql")
    node["columns"]["city_value_rank"] = {"name": "city_value_rank", "description": "", "meta": {}}
    node["meta"] = {"dptool": {"metric": decl}}
    node["config"] = {**node["config"], "meta": {"dptool": {"metric": decl}}}
    manifest["nodes"][node["unique_id"]] = node
    return manifest


def test_a_top_k_metric_without_a_window_is_refused_in_one_line_naming_its_node_and_the_key():
    catalog = load_catalog(_manifest(TOP_K))
    assert selection_cue(catalog.metrics["city_share"]) == "city_value_rank"
    refused = unwindowed(catalog)
    assert list(refused) == ["city_share"]  # the shop's own metrics select nothing
    (line,) = refused.values()
    assert "\n" not in line and line.startswith("warning: metric city_share: no task: model.shop.city_share:")
    assert "meta.dptool.metric.selection" in line


def test_a_top_k_metric_with_a_window_is_asked_and_documented_with_it(tmp_path):
    catalog = load_catalog(_manifest({**TOP_K, "selection": WINDOW}))
    assert unwindowed(catalog) == {}
    clause = selection_clause("city_share", catalog)
    assert clause == (" Take the top three cities by amount paid as picked over the whole history on record, whatever "
                      "the period, slice or group asked about.")
    assert selection_clause("avg_order_value", catalog) == ""
    write_domain_kb(tmp_path / "sales", catalog, "sales")
    text = (tmp_path / "sales" / "metrics.md").read_text(encoding="utf-8")
    entry = text.split("## Top-3 City Share\n")[1].split("\n## ")[0]
    assert f"- Selection: the top three cities by amount paid, picked {SELECTION_WINDOWS['history']}." in entry
    assert "- Selection:" not in text.split("## Average Order Value\n")[1].split("\n## ")[0]


@pytest.mark.parametrize("cue", ["Top 10 Customers' Share", "Active Buyer Count", "First-Order Share",
                                 "Cohort Retention", "Customer Lifetime Value", "Top-ten Share"])
def test_the_cue_reads_a_label_that_selects(cue):
    catalog = load_catalog(_manifest({**TOP_K, "label": cue, "value": "avg(amount)", "formula": "AVG(amount)"}))
    assert selection_cue(catalog.metrics["city_share"]), cue
    assert "city_share" in unwindowed(catalog)


def test_a_semantic_layer_metric_states_its_own_windows_and_is_not_refused():
    """A conversion's window ("within 7 days", its base events in the period asked about) is its type's: the bakery's
    First-Week Order Rate is asked (tests/test_semantic_kinds.py), and its declaration has no `selection` key."""
    catalog = load_catalog(_manifest(TOP_K))
    catalog.metrics["city_share"] = replace(catalog.metrics["city_share"], semantic=True)
    assert unwindowed(catalog) == {}


def test_a_period_window_and_a_window_in_words_read_as_declared():
    catalog = load_catalog(_manifest({**TOP_K, "selection": {"members": "the top three cities", "window": "period"}}))
    assert "afresh within the period" in selection_clause("city_share", catalog)
    words = {"members": "the top three cities", "window": "over the 12 months before the period asked about"}
    catalog = load_catalog(_manifest({**TOP_K, "selection": words}))
    assert selection_clause("city_share", catalog) == (" Take the top three cities as picked over the 12 months "
                                                       "before the period asked about.")


@pytest.mark.parametrize("bad, key", [("over all history", "selection"),
                                      ({"members": "the top three"}, "selection.window"),
                                      ({"members": "", "window": "history"}, "selection.members"),
                                      ({"members": "x", "window": "history", "when": "now"}, "selection.when"),
                                      ({"members": "the top three, before any policy", "window": "history"},
                                       "selection.members")])
def test_a_malformed_selection_is_one_line_naming_the_node_and_the_key(bad, key):
    with pytest.raises(DptoolError) as err:
        load_catalog(_manifest({**TOP_K, "selection": bad}))
    message = str(err.value)
    assert "\n" not in message and "models/sales/metrics" in message and "model.shop.city_share" in message
    assert f"meta.dptool.metric.{key}" in message


# --- end to end: `dptool generate` on a copy of the corner_shop fixture ----------------------------------------------

SHOP = FIXTURES / "corner_shop"
RANKED = """with ranked as (
    select store, rank() over (order by sum(amount) desc) as store_rank from {{ ref('orders') }} group by store
)
select o.order_id, o.ordered_at, o.store, o.price_band, o.status, o.amount, r.store_rank
from {{ ref('orders') }} as o inner join ranked as r on r.store = o.store
"""
COLUMNS = [{"name": c, "description": c.replace("_", " ")}
           for c in ("order_id", "ordered_at", "store", "price_band", "status", "amount", "store_rank")]
STORE_WINDOW = {"members": "the two stores with the highest amount paid", "window": "history"}


def _metric(name: str, label: str, k: int, selection: dict | None) -> dict:
    decl = {"label": label, "value": f"sum(case when store_rank <= {k} then amount else 0 end) / sum(amount)",
            "unit": "share of amount", "format": "percent",
            "formula": f"SUM(amount of the top {k} stores by amount paid) / SUM(amount)", "grain": "orders",
            "period": "ordered_at"}
    if selection:
        decl["selection"] = selection
    return {"name": name, "description": f"{label}: the share of the amount paid at the top {k} stores.",
            "config": {"meta": {"dptool": {"metric": decl}}}, "columns": COLUMNS}


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """The corner shop with `top_store_share` (a window declared) and `lead_store_share` (none); `dptool generate`."""
    root = tmp_path_factory.mktemp("selection") / "project"
    shutil.copytree(SHOP, root, ignore=shutil.ignore_patterns("target", "dbt_packages", "logs", "*.duckdb*",
                                                              "dptool_gold", "packages.yml", "package-lock.yml"))
    metrics = root / "models" / "shop" / "metrics"
    for name in ("top_store_share", "lead_store_share"):
        (metrics / f"{name}.sql").write_text(RANKED, encoding="utf-8")
    (metrics / "_ranked.yml").write_text(yaml.safe_dump({"version": 2, "models": [
        _metric("top_store_share", "Top-2 Store Share", 2, STORE_WINDOW),
        _metric("lead_store_share", "Lead Store Share", 1, None)]}, sort_keys=False), encoding="utf-8")
    proc = run_cli("init", "--project-dir", str(root))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    project = DbtProject(root)
    project.run("deps")
    project.run("build")
    out = root / "bundle"
    proc = run_cli("generate", "--project-dir", str(root), "--out", str(out), "--target", "16", "--min-per-type", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    return proc, out, tasks


def test_generate_refuses_the_metric_without_a_window_in_one_line(shop):
    proc, out, tasks = shop
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if "metric lead_store_share:" in line]
    assert lines and all("model.corner_shop.lead_store_share" in line and "meta.dptool.metric.selection" in line
                         for line in lines)
    assert not [t for t in tasks if "lead_store_share" in t.get("metric_ids", [])]
    card = (out / "card.md").read_text(encoding="utf-8")
    assert "metric lead_store_share: no task: model.corner_shop.lead_store_share" in card


def test_every_question_on_the_windowed_metric_says_the_window(shop):
    _, out, tasks = shop
    asked = [t for t in tasks if t.get("gold_sql") and t["metric_ids"][:1] == ["top_store_share"]]
    assert asked
    said = f"Take the two stores with the highest amount paid as picked {SELECTION_WINDOWS['history']}."
    assert all(said in t["question"] for t in asked), [t["question"] for t in asked if said not in t["question"]]
    text = (out / "kb" / "shop" / "metrics.md").read_text(encoding="utf-8")
    entry = text.split("## Top-2 Store Share\n")[1].split("\n## ")[0]
    assert "- Selection: the two stores with the highest amount paid, picked over the whole history" in entry


def test_a_question_that_drops_the_window_fails_validation_and_an_llm_is_told_to_say_it():
    from dptool.generate.llm_phrase import scope
    from dptool.generate.validate import selection_unstated

    catalog = load_catalog(_manifest({**TOP_K, "selection": WINDOW}))
    clause = selection_clause("city_share", catalog).strip()
    task = {"analysis_type": "trend_analysis", "metric_ids": ["city_share"], "dimension": "ordered_at", "slice": {},
            "window": None}
    bare = "How did our Top-3 City Share develop month by month over the whole history?"
    assert selection_unstated(task, catalog, bare)
    assert not selection_unstated(task, catalog, f"{bare}  {clause}")
    assert not selection_unstated({**task, "metric_ids": ["avg_order_value"]}, catalog, bare)
    assert f'say: "{clause}"' in scope(task, catalog)
