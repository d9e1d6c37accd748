"""The DP-Bench JSON file: a round trip gives the same bytes; a malformed file is one line naming the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dptool.dp import dpjson
from dptool.errors import DptoolError

GOLD = Path(__file__).parent / "fixtures" / "dp" / "score_gold.json"


def test_round_trip_is_byte_identical(tmp_path):
    doc = dpjson.read(GOLD)
    first = dpjson.write(doc, tmp_path / "a.json").read_bytes()
    second = dpjson.write(dpjson.read(tmp_path / "a.json"), tmp_path / "b.json").read_bytes()
    assert first == second
    data = json.loads(first)
    assert [d["dp_id"] for d in data["data_products"]] == ["shop_people", "shop_sales", "tiny_stock"]


def test_the_shape_holds_what_dp_bench_describes():
    doc = dpjson.read(GOLD)
    sales = next(d for d in doc.data_products if d.id == "shop_sales")
    assert sales.columns() == {("customers", "id"), ("customers", "state"), ("orders", "id"), ("orders", "status"),
                               ("orders", "customer_id")}
    assert [(d.name, d.provenance, d.source_columns) for d in sales.derived_columns()] == [
        ("total_revenue", "SELECT SUM(items.price) FROM items", (("items", "price"),)),
        ("largest_order", "SELECT MAX(orders.total) FROM orders", (("orders", "total"),)),
    ]
    assert sales.columns_with_provenance() == sales.columns() | {("items", "price"), ("orders", "total")}
    assert doc.databases["shop"].n_columns == 52 and doc.databases["tiny"].n_columns == 6


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.update(format="other"), r'not a DP-Bench file \(expected "format": "dp-bench"\)'),
    (lambda d: d.update(version=9), r"version 9 is not supported"),
    (lambda d: d["data_products"][0].pop("dp_id"), r"data_products\[0\]: dp_id must be a non-empty string"),
    (lambda d: d["data_products"][0]["tables"][1]["derived_columns"][0].update(source_columns=["price"]),
     r"data_products\[0\]\.tables\[1\]\.derived_columns\[0\]\.source_columns: 'price' is not table\.column"),
    (lambda d: d["data_products"].append(dict(d["data_products"][0])), r"data product 'shop_sales' appears twice"),
])
def test_a_malformed_file_is_one_line_naming_the_key(tmp_path, edit, message):
    data = json.loads(GOLD.read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DptoolError, match=message) as info:
        dpjson.read(path)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)
