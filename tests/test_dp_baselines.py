"""DP-Bench §6 baselines: no search, hybrid search (BM25, and dense through the loopback Ollama server), the LLM."""

from __future__ import annotations

import json
import math

import pytest

from dptool.dp import dpjson
from dptool.dp.baselines import BM25_THRESHOLD, HYBRID_THRESHOLD, HybridSearch, llm_create, no_search
from dptool.llm.client import LLM, LLMError

C, T = dpjson.Column, dpjson.Table
DB = dpjson.Database("shop", (
    T("orders", (C("order_id", "VARCHAR", "Order identifier."), C("customer_id", "VARCHAR", "The order's customer."),
                 C("order_status", "VARCHAR", "Delivered, shipped or canceled."),
                 C("delivered_at", "TIMESTAMP", "When the parcel arrived."))),
    T("customers", (C("customer_id", "VARCHAR", "Customer record."),
                    C("customer_state", "VARCHAR", "Delivery region."))),
    T("products", (C("product_id", "VARCHAR", "Product identifier."), C("weight_g", "INTEGER", "Weight in grams."))),
), (dpjson.ForeignKey("orders", "customer_id", "customers", "customer_id"),))
REQUEST = "Delivery region and order status of every order"


def test_no_search_is_the_whole_database():
    dp = no_search(DB, "all", REQUEST)
    assert dp.columns() == DB.column_refs() and not dp.derived_columns()


def test_sparse_cosine_is_one_when_the_request_is_a_column_s_sentence():
    # every word of "customers customer_state Delivery region." once: both vectors are idf-proportional
    search = HybridSearch(DB)
    scores = dict(zip([(t, c) for t, c, _ in search.entries], search.sparse_scores(
        "customers customer state delivery region"), strict=True))
    assert scores[("customers", "customer_state")] == pytest.approx(1.0)
    assert scores[("products", "weight_g")] == 0.0  # no shared word
    assert max(scores.values()) == scores[("customers", "customer_state")]


def test_threshold_is_inclusive_and_foreign_keys_join_chosen_tables():
    search = HybridSearch(DB)
    status = dict(zip([(t, c) for t, c, _ in search.entries], search.sparse_scores(REQUEST), strict=True))[
        ("orders", "order_status")]
    dp = HybridSearch(DB, threshold=status).create("dp", REQUEST)
    assert dp.columns() == {("orders", "order_status"), ("customers", "customer_state"),
                            ("orders", "customer_id"), ("customers", "customer_id")}  # the last two: the FK
    no_fk = dpjson.Database(DB.id, DB.tables)
    assert HybridSearch(no_fk, threshold=status).create("dp", REQUEST).columns() == {
        ("orders", "order_status"), ("customers", "customer_state")}
    assert HybridSearch(DB, threshold=status + 1e-9).create("dp", REQUEST).columns() == {
        ("customers", "customer_state")}  # one table left: no key to add
    assert HybridSearch(DB).threshold == BM25_THRESHOLD


def test_hybrid_weighs_dense_embeddings_0_8_and_bm25_0_2(ollama_server):
    embedder = LLM("test-model", host=ollama_server.url)
    search = HybridSearch(DB, embedder)
    assert search.threshold == HYBRID_THRESHOLD

    def cosine(a, b):
        return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))

    query = ollama_server.embedding(REQUEST)
    expected = [0.8 * cosine(ollama_server.embedding(sentence), query) + 0.2 * sparse
                for (_, _, sentence), sparse in zip(search.entries, search.sparse_scores(REQUEST), strict=True)]
    assert search.scores(REQUEST) == pytest.approx(expected, rel=1e-12)
    embedded = [body["input"] for path, body in ollama_server.requests if path == "/api/embed"]
    assert embedded == [[s for _, _, s in search.entries], [REQUEST]]


GOOD = {
    "reasoning": "Delivery questions need orders and the customer's state.",
    "tables": [{"table_name": "orders", "columns": ["order_id", "order_status", "order_colour"]},
               {"table_name": "customers", "columns": ["customer_state"]},
               {"table_name": "warehouses", "columns": ["id"]}],
    "derived_columns": [
        {"column_name": "late", "description": "1 when late.", "table_name": "orders",
         "sql": "SELECT CASE WHEN o.delivered_at > CURRENT_DATE THEN 1 ELSE 0 END FROM orders AS o"},
        {"column_name": "heaviest", "description": "", "table_name": "products",
         "sql": "SELECT MAX(weight_kg) FROM products"},
        {"column_name": "by state", "description": "", "sql": "SELECT 1"},
        {"column_name": "ghosts", "description": "", "sql": "SELECT COUNT(*) FROM ghosts"},
    ],
}


def test_llm_baseline_retries_bad_json_and_drops_what_the_database_lacks(ollama_server):
    ollama_server.chat_replies += [{"content": "{not json"}, {"content": json.dumps({"tables": "all of them"})},
                                   {"content": json.dumps(GOOD)}]
    result = llm_create(LLM("test-model", host=ollama_server.url), DB, "late_orders", REQUEST, "duckdb")
    assert result.attempts == 2  # a JSON object without a list of tables is asked for again
    assert result.dropped == [
        "column orders.order_colour", "table warehouses",
        "derived column heaviest (Column 'weight_kg' could not be resolved. Line: 1, Col: 20)",
        "derived column 'by state' (not a unique column name)",
        "derived column ghosts (unknown table ghosts)",
    ]
    product = result.product
    assert product.columns() == {("orders", "order_id"), ("orders", "order_status"), ("customers", "customer_state")}
    [late] = product.derived_columns()
    assert (late.name, late.source_columns) == ("late", (("orders", "delivered_at"),))
    system, user = (m["content"] for m in ollama_server.requests[0][1]["messages"])
    assert "one duckdb SQL query" in system and result.prompt == "dp_create_v1"
    assert user.endswith(REQUEST) and '"column_name": "weight_g"' in user
    assert "incomplete" in ollama_server.requests[2][1]["messages"][-1]["content"]


def test_llm_that_never_gives_the_shape_fails_in_one_line(ollama_server):
    ollama_server.chat_replies += [{"content": json.dumps({"answer": 42})}] * 3
    with pytest.raises(LLMError, match=r"no usable data product after 3 replies \(`tables` is missing or not a list\)"):
        llm_create(LLM("test-model", host=ollama_server.url), DB, "x", REQUEST, "duckdb")
