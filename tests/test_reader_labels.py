"""Two labels a reader cannot tell apart (a fullwidth letter, a hyphen of any kind, case, spacing) are one label:
the catalog refuses two metrics, or two dimensions of one metric, that share it, in one line naming both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dptool.errors import DptoolError
from dptool.project.catalog import load_catalog
from dptool.project.labels import reader_key

SHOP = Path(__file__).parent / "fixtures" / "shop_manifest.json"
TABLES = "models/sales/staging/_sales__tables.yml"


def shop() -> dict:
    return json.loads(SHOP.read_text(encoding="utf-8"))


def set_meta(holder: dict, change) -> None:
    for meta in (holder.get("meta"), (holder.get("config") or {}).get("meta")):
        if meta and "dptool" in meta:
            change(meta["dptool"])


@pytest.mark.parametrize(("a", "b"), [
    ("\uff21ctive Sellers", "Active Sellers"), ("e-mail Opens", "email opens"), ("E\u2010mail Opens", "Email Opens"),
    ("Re\u2011orders", "Re-orders"), ("Top\u201410 Share", "Top 10 Share"), ("Soft\u00adhyphen", "Softhyphen"),
])
def test_labels_a_reader_cannot_tell_apart_have_one_key(a, b):
    assert reader_key(a) == reader_key(b)


@pytest.mark.parametrize(("a", "b"), [("Revenue %", "Revenue $"), ("Top 10 Share", "Top 100 Share"),
                                      ("Order Value", "Order Values")])
def test_labels_a_reader_tells_apart_keep_their_keys(a, b):
    assert reader_key(a) != reader_key(b)


@pytest.mark.parametrize("label", ["e-mail Opens", "E\u2010MAIL OPENS", "\uff25mail Opens"])
def test_two_metrics_whose_labels_read_the_same_are_refused_in_one_line(label):
    manifest = shop()
    set_meta(manifest["nodes"]["model.shop.avg_order_value"], lambda d: d["metric"].update(label="Email Opens"))
    set_meta(manifest["nodes"]["model.shop.paid_rate"], lambda d: d["metric"].update(label=label))
    with pytest.raises(DptoolError) as info:
        load_catalog(manifest)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("models/sales/metrics/_sales__metrics.yml: model.shop.avg_order_value and "
                              "models/sales/metrics/_sales__metrics.yml: model.shop.paid_rate both have the label "
                              f"{label!r}")


def test_two_dimensions_of_one_metric_whose_labels_read_the_same_are_refused_in_one_line():
    manifest = shop()
    catalog = load_catalog(manifest)
    both = [m.id for m in catalog.metrics.values()
            if {"model.shop.customers.city", "model.shop.customers.state"} <= {d.id for d in catalog.dimensions_of(m)}]
    assert both  # a metric broken down by either
    set_meta(manifest["nodes"]["model.shop.customers"]["columns"]["state"], lambda d: d.update(label="\uff23ity"))
    with pytest.raises(DptoolError) as info:
        load_catalog(manifest)
    assert str(info.value) == (
        f"{TABLES}: model.shop.customers (city) and {TABLES}: model.shop.customers (state) both have the label "
        f"'\uff23ity' as a reader sees it ('city'): a question on {sorted(both)[0]} by or for it could not say which "
        "column it means; give each its own label (the column's meta.dptool.label, or the semantic layer "
        "dimension's)")


def test_distinct_labels_load():
    manifest = shop()
    set_meta(manifest["nodes"]["model.shop.customers"]["columns"]["state"], lambda d: d.update(label="home state"))
    assert load_catalog(manifest).dimensions["model.shop.customers.state"].label == "home state"
