"""Tests of the synthetic Olist-shaped e-commerce generator (small scales, so they stay fast)."""

from __future__ import annotations

import csv
import re
from collections import Counter, defaultdict
from decimal import Decimal

import pytest

from dptool.demo import ecommerce

SCALE = 0.05  # 500 orders

EXPECTED_COLUMNS = {
    "olist_orders_dataset": [
        "order_id", "customer_id", "order_status", "order_purchase_timestamp", "order_approved_at",
        "order_delivered_carrier_date", "order_delivered_customer_date", "order_estimated_delivery_date",
    ],
    "olist_order_items_dataset": [
        "order_id", "order_item_id", "product_id", "seller_id", "shipping_limit_date", "price",
        "freight_value",
    ],
    "olist_order_payments_dataset": [
        "order_id", "payment_sequential", "payment_type", "payment_installments", "payment_value",
    ],
    "olist_order_reviews_dataset": [
        "review_id", "order_id", "review_score", "review_comment_title", "review_comment_message",
        "review_creation_date", "review_answer_timestamp",
    ],
    "olist_customers_dataset": [
        "customer_id", "customer_unique_id", "customer_zip_code_prefix", "customer_city", "customer_state",
    ],
    "olist_sellers_dataset": ["seller_id", "seller_zip_code_prefix", "seller_city", "seller_state"],
    "olist_products_dataset": [
        "product_id", "product_category_name", "product_name_lenght", "product_description_lenght",
        "product_photos_qty", "product_weight_g", "product_length_cm", "product_height_cm",
        "product_width_cm",
    ],
    "olist_product_category_name_translation": ["product_category_name", "product_category_name_english"],
}

HEX32 = re.compile(r"^[0-9a-f]{32}$")
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")
MONEY = re.compile(r"^\d+\.\d{2}$")
EMAIL = re.compile(r"[a-z0-9._]+@[a-z]+(\.[a-z]+)+")


@pytest.fixture(scope="module")
def tables() -> dict[str, list[dict]]:
    return ecommerce.generate(SCALE, seed=7)


@pytest.fixture(scope="module")
def csv_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("ecommerce")
    ecommerce.write_csvs(out, SCALE, seed=7)
    return out


def test_tables_in_order():
    assert tuple(EXPECTED_COLUMNS) == ecommerce.TABLES


def test_csv_headers_and_format(csv_dir):
    for name, columns in EXPECTED_COLUMNS.items():
        data = (csv_dir / f"{name}.csv").read_bytes()
        assert b"\r" not in data
        assert data.endswith(b"\n")
        assert data.decode("utf-8").split("\n", 1)[0] == ",".join(columns)


def test_csv_reads_back_as_generated(tables, csv_dir):
    for name in ecommerce.TABLES:
        with open(csv_dir / f"{name}.csv", newline="", encoding="utf-8") as f:
            assert list(csv.DictReader(f)) == tables[name], name


def test_same_scale_and_seed_give_identical_bytes(tmp_path):
    first = ecommerce.write_csvs(tmp_path / "a", SCALE, seed=123)
    second = ecommerce.write_csvs(tmp_path / "b", SCALE, seed=123)
    assert first == second
    for name in ecommerce.TABLES:
        assert (tmp_path / "a" / f"{name}.csv").read_bytes() == (tmp_path / "b" / f"{name}.csv").read_bytes()
    ecommerce.write_csvs(tmp_path / "c", SCALE, seed=124)
    orders = "olist_orders_dataset.csv"
    assert (tmp_path / "a" / orders).read_bytes() != (tmp_path / "c" / orders).read_bytes()


@pytest.mark.parametrize("scale", [0.02, 0.05, 0.1])
def test_row_counts_scale(scale):
    t = ecommerce.generate(scale)
    n_orders = round(10_000 * scale)
    assert len(t["olist_orders_dataset"]) == n_orders
    assert len(t["olist_customers_dataset"]) == n_orders
    assert len(t["olist_sellers_dataset"]) == round(300 * scale)
    assert len(t["olist_products_dataset"]) == round(3_000 * scale)
    assert len(t["olist_product_category_name_translation"]) == 71
    # ~1.15 items and ~1.04 payment rows per order; ~99% of orders have a review.
    assert 1.05 * n_orders < len(t["olist_order_items_dataset"]) < 1.3 * n_orders
    assert n_orders <= len(t["olist_order_payments_dataset"]) < 1.1 * n_orders
    assert 0.97 * n_orders < len(t["olist_order_reviews_dataset"]) <= n_orders


def test_write_csvs_returns_row_counts(tables, csv_dir):
    for name in ecommerce.TABLES:
        with open(csv_dir / f"{name}.csv", encoding="utf-8", newline="") as f:
            assert sum(1 for _ in csv.reader(f)) - 1 == len(tables[name])
    assert ecommerce.write_csvs(csv_dir, SCALE, seed=7) == {n: len(rows) for n, rows in tables.items()}


def test_referential_integrity(tables):
    orders = {r["order_id"]: r for r in tables["olist_orders_dataset"]}
    customers = {r["customer_id"]: r for r in tables["olist_customers_dataset"]}
    sellers = {r["seller_id"] for r in tables["olist_sellers_dataset"]}
    products = {r["product_id"]: r for r in tables["olist_products_dataset"]}
    categories = {r["product_category_name"] for r in tables["olist_product_category_name_translation"]}
    items, payments = tables["olist_order_items_dataset"], tables["olist_order_payments_dataset"]
    reviews = tables["olist_order_reviews_dataset"]

    assert len(orders) == len(tables["olist_orders_dataset"])  # unique keys
    assert len(customers) == len(tables["olist_customers_dataset"])
    assert len({r["review_id"] for r in reviews}) == len(reviews)
    # One customer_id per order, both ways.
    assert sorted(o["customer_id"] for o in orders.values()) == sorted(customers)
    assert {i["order_id"] for i in items} <= set(orders)
    assert {i["product_id"] for i in items} == set(products)  # every product sold at least once
    assert {i["seller_id"] for i in items} == sellers  # every seller sold something
    assert {p["order_id"] for p in payments} == set(orders)  # every order has a payment
    assert {r["order_id"] for r in reviews} <= set(orders)
    assert max(Counter(r["order_id"] for r in reviews).values()) == 1
    assert {p["product_category_name"] for p in products.values()} - {""} <= categories
    # A returning customer keeps the same place.
    places = defaultdict(set)
    for c in customers.values():
        places[c["customer_unique_id"]].add((c["customer_city"], c["customer_state"]))
    assert all(len(p) == 1 for p in places.values())


def test_items_and_payments_agree(tables):
    orders = {r["order_id"]: r for r in tables["olist_orders_dataset"]}
    item_total: dict[str, Decimal] = defaultdict(Decimal)
    item_ids = defaultdict(list)
    for i in tables["olist_order_items_dataset"]:
        item_total[i["order_id"]] += Decimal(i["price"]) + Decimal(i["freight_value"])
        item_ids[i["order_id"]].append(int(i["order_item_id"]))
    paid: dict[str, Decimal] = defaultdict(Decimal)
    sequences = defaultdict(list)
    for p in tables["olist_order_payments_dataset"]:
        paid[p["order_id"]] += Decimal(p["payment_value"])
        sequences[p["order_id"]].append(int(p["payment_sequential"]))
        if p["payment_type"] != "credit_card":
            assert p["payment_installments"] == "1"
        if p["payment_type"] == "not_defined":
            assert p["payment_value"] == "0.00"
            assert p["order_id"] not in item_total
    for order_id, total in item_total.items():
        assert paid[order_id] == total
        assert item_ids[order_id] == list(range(1, len(item_ids[order_id]) + 1))
        assert orders[order_id]["order_status"] != "unavailable"
    assert all(s == list(range(1, len(s) + 1)) for s in sequences.values())


def test_value_formats(tables):
    for o in tables["olist_orders_dataset"]:
        assert HEX32.match(o["order_id"]) and HEX32.match(o["customer_id"])
        assert TIMESTAMP.match(o["order_purchase_timestamp"])
        assert "2016-09-04" <= o["order_purchase_timestamp"][:10] <= "2018-10-17"
        assert o["order_estimated_delivery_date"].endswith(" 00:00:00")
        for col in ("order_approved_at", "order_delivered_carrier_date", "order_delivered_customer_date"):
            assert o[col] == "" or TIMESTAMP.match(o[col])
        delivered = o["order_delivered_customer_date"]
        assert bool(delivered) == (o["order_status"] == "delivered")
        assert delivered == "" or o["order_purchase_timestamp"] < o["order_approved_at"] < delivered
    for i in tables["olist_order_items_dataset"]:
        assert MONEY.match(i["price"]) and MONEY.match(i["freight_value"])
        assert TIMESTAMP.match(i["shipping_limit_date"])
    for c in tables["olist_customers_dataset"]:
        assert re.fullmatch(r"\d{5}", c["customer_zip_code_prefix"])
        assert c["customer_city"] == c["customer_city"].lower()
    for s in tables["olist_sellers_dataset"]:
        assert HEX32.match(s["seller_id"]) and re.fullmatch(r"\d{5}", s["seller_zip_code_prefix"])
    for r in tables["olist_order_reviews_dataset"]:
        assert r["review_score"] in {"1", "2", "3", "4", "5"}
        assert r["review_creation_date"].endswith(" 00:00:00")
        assert r["review_creation_date"] < r["review_answer_timestamp"]


def test_only_contact_emails_carry_an_at_sign():
    reviews = ecommerce.generate(0.2, seed=3)["olist_order_reviews_dataset"]
    with_email = [r for r in reviews if "@" in r["review_comment_message"]]
    assert 0.01 < len(with_email) / len(reviews) < 0.06
    for r in reviews:
        assert "@" not in r["review_comment_title"]
        message = r["review_comment_message"]
        assert message.count("@") == len(EMAIL.findall(message))


def test_sao_paulo_dominates_customers_and_sellers():
    t = ecommerce.generate(0.2, seed=5)
    customer_states = Counter(c["customer_state"] for c in t["olist_customers_dataset"])
    seller_states = Counter(s["seller_state"] for s in t["olist_sellers_dataset"])
    assert 0.35 < customer_states["SP"] / 2000 < 0.5
    assert 0.45 < seller_states["SP"] / 60 < 0.75
    statuses = Counter(o["order_status"] for o in t["olist_orders_dataset"])
    assert 0.94 < statuses["delivered"] / 2000 < 0.99


def test_duckdb_reads_the_files(csv_dir, tables):
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    for name in ("olist_customers_dataset", "olist_order_reviews_dataset", "olist_products_dataset"):
        rel = con.execute(f"select * from read_csv('{csv_dir / name}.csv', all_varchar = true)")
        columns = [d[0] for d in rel.description]
        assert columns == EXPECTED_COLUMNS[name]
        rows = [dict(zip(columns, row, strict=True)) for row in rel.fetchall()]
        assert [{c: v or "" for c, v in row.items()} for row in rows] == tables[name]


def test_rejects_non_positive_scale():
    with pytest.raises(ValueError):
        ecommerce.generate(0)
