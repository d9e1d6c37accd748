"""Column lineage with sqlglot: typed edges, unresolved sources, joins, and each column's provenance query."""

from __future__ import annotations

import pytest

from dptool.dp.lineage import Edge, model_lineage, qualify_query, rename_tables, source_columns
from dptool.errors import DptoolError

SCHEMA = {"wh": {"shop": {
    "orders": {"id": "int", "customer_id": "int", "status": "text", "amount": "text", "placed_at": "timestamp"},
    "customers": {"id": "int", "state": "text", "name": "text"},
    "items": {"order_id": "int", "price": "double"},
}}}

MODEL = """
with item_totals as (
    select i.order_id, sum(i.price) as items_value, count(*) as n_items
    from wh.shop.items as i
    group by i.order_id
)
select
    o.id,
    o.status as order_state,
    cast(o.amount as double) as amount,
    extract(year from o.placed_at) as placed_year,
    c.state,
    t.items_value,
    t.n_items,
    o.mystery,
    x.y as ghost
from wh.shop.orders as o
join wh.shop.customers as c on c.id = o.customer_id
left join item_totals as t on t.order_id = o.id
left join wh.shop.orders as unused on unused.id = o.id
left join wh.shop.nowhere as x on x.id = o.id
where o.status <> 'test'
"""

ORDERS, CUSTOMERS, ITEMS = "wh.shop.orders", "wh.shop.customers", "wh.shop.items"


@pytest.fixture(scope="module")
def lineage():
    return model_lineage(qualify_query(MODEL, SCHEMA, "duckdb"), SCHEMA, "duckdb")


@pytest.mark.parametrize(("column", "kind", "edges"), [
    ("id", "pass-through", [Edge(ORDERS, "id", "pass-through")]),
    ("order_state", "rename", [Edge(ORDERS, "status", "rename")]),
    ("amount", "cast", [Edge(ORDERS, "amount", "cast")]),
    ("placed_year", "derived", [Edge(ORDERS, "placed_at", "derived")]),
    ("state", "pass-through", [Edge(CUSTOMERS, "state", "pass-through")]),
    ("items_value", "aggregate", [Edge(ITEMS, "price", "aggregate")]),
    ("n_items", "aggregate", []),  # count(*): an aggregate with no source column
])
def test_every_edge_is_typed_by_the_strongest_step_on_its_path(lineage, column, kind, edges):
    assert lineage[column].kind == kind
    assert list(lineage[column].edges) == edges


def test_sources_sqlglot_cannot_tie_to_catalog_columns_are_named_unresolved(lineage):
    assert lineage["mystery"].edges == (Edge(ORDERS, "mystery", "unresolved"),)  # column not in the catalog
    assert lineage["ghost"].edges == (Edge("wh.shop.nowhere", "y", "unresolved"),)  # relation not in it
    assert lineage["mystery"].derived and lineage["ghost"].derived


def test_non_derived_means_one_column_of_the_query_s_own_table(lineage):
    assert [name for name, col in lineage.items() if not col.derived] == ["id", "order_state", "amount"]
    assert lineage["state"].through_join and lineage["state"].derived  # a value reached through a join
    assert lineage["n_items"].through_join


def test_provenance_keeps_filters_and_the_joins_it_needs_and_drops_the_rest(lineage):
    state = lineage["state"]
    sql = state.provenance.sql("duckdb")
    assert sql == ("SELECT c.state AS state FROM wh.shop.orders AS o JOIN wh.shop.customers AS c "
                   "ON c.id = o.customer_id WHERE o.status <> 'test'")
    # join keys and filters are read too: DP-Bench's provenance columns
    assert set(state.reads) == {(CUSTOMERS, "state"), (CUSTOMERS, "id"), (ORDERS, "customer_id"), (ORDERS, "status")}


def test_provenance_cuts_ctes_down_to_the_columns_used(lineage):
    sql = lineage["items_value"].provenance.sql("duckdb")
    assert "count" not in sql.lower() and "customers" not in sql and "unused" not in sql
    assert sql.startswith("WITH item_totals AS (SELECT i.order_id AS order_id, SUM(i.price) AS items_value")


def test_upstream_models_expand_so_lineage_reaches_the_tables():
    upstream = "select o.id as order_id, o.amount from wh.shop.orders as o"
    model = "select order_id, max(amount) as top_amount from wh.dp.upstream group by order_id"
    tree = qualify_query(model, SCHEMA, "duckdb", sources={'"wh"."dp"."upstream"': upstream})
    lineage = model_lineage(tree, SCHEMA, "duckdb")
    assert lineage["order_id"].edges == (Edge(ORDERS, "id", "rename"),)
    assert lineage["top_amount"].edges == (Edge(ORDERS, "amount", "aggregate"),)
    assert not lineage["order_id"].derived


def test_rename_tables_gives_database_names_and_keeps_aliases(lineage):
    renamed = rename_tables(lineage["state"].provenance, {ORDERS: "orders", CUSTOMERS: "customers"})
    assert renamed.sql("duckdb").startswith("SELECT c.state AS state FROM orders AS o JOIN customers AS c")
    assert source_columns(renamed) >= {("orders", "customer_id"), ("customers", "state")}


def test_sql_that_does_not_parse_is_one_line():
    with pytest.raises(DptoolError, match=r"^cannot parse SQL") as info:
        qualify_query("select from where (", SCHEMA, "duckdb")
    assert "\n" not in str(info.value)
