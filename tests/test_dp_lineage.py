"""Column lineage with sqlglot: typed edges, unresolved sources, joins, and each column's provenance query."""

from __future__ import annotations

import duckdb
import pytest

from dptool.dp.lineage import Edge, model_lineage, provenance_query, qualify_query, rename_tables, source_columns
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
# what dbt's `unique` tests prove: a LEFT JOIN on one of these matches at most one row
UNIQUE = frozenset({(ORDERS, "id"), (CUSTOMERS, "id"), ("wh.shop.nowhere", "id")})


@pytest.fixture(scope="module")
def lineage():
    return model_lineage(qualify_query(MODEL, SCHEMA, "duckdb"), SCHEMA, "duckdb", UNIQUE)


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


def test_non_derived_means_one_column_of_a_table_copied_or_renamed_through_a_join_or_not(lineage):
    assert [name for name, col in lineage.items() if not col.derived] == ["id", "order_state", "state"]
    assert lineage["state"].through_join  # customers.state, reached through a join: still a copy
    assert lineage["amount"].derived  # a cast computes a new value
    assert lineage["n_items"].through_join and lineage["n_items"].derived
    # the keys that put a copied column on the model's rows
    assert lineage["state"].join_keys == ((CUSTOMERS, "id"), (ORDERS, "customer_id"))


def test_provenance_keeps_filters_and_the_joins_it_needs_and_drops_the_rest(lineage):
    state = lineage["state"]
    sql = state.provenance.sql("duckdb")
    assert sql == ("SELECT c.state AS state FROM wh.shop.orders AS o JOIN wh.shop.customers AS c "
                   "ON c.id = o.customer_id WHERE o.status <> 'test'")
    # join keys and filters are read too: DP-Bench's provenance columns
    assert set(state.reads) == {(CUSTOMERS, "state"), (CUSTOMERS, "id"), (ORDERS, "customer_id"), (ORDERS, "status")}


def test_provenance_cuts_ctes_down_to_the_columns_used(lineage):
    sql = lineage["items_value"].provenance.sql("duckdb")
    assert "count" not in sql.lower() and "unused" not in sql
    assert sql.startswith("WITH item_totals AS (SELECT i.order_id AS order_id, SUM(i.price) AS items_value")
    assert "JOIN wh.shop.customers AS c ON c.id = o.customer_id" in sql  # the inner join drops rows: kept


@pytest.mark.parametrize(("join", "kept"), [
    ("join wh.shop.customers as c on c.id = o.customer_id", True),  # inner: drops the orders without one
    ("cross join wh.shop.customers as c", True),
    ("right join wh.shop.customers as c on c.id = o.customer_id", True),  # adds customers without orders
    ("full join wh.shop.customers as c on c.id = o.customer_id", True),
    ("left join wh.shop.customers as c on c.id = o.customer_id", False),  # customers.id is unique
    ("left join wh.shop.customers as c on c.id = o.customer_id and c.state = 'SP'", False),
    ("left join wh.shop.customers as c on c.name = o.status", True),  # name may repeat: rows too
    ("left join wh.shop.customers as c on c.id > o.customer_id", True),
    ("left join wh.shop.items as c on c.order_id = o.id", True),  # many items per order
    ("left join (select order_id, sum(price) as v from wh.shop.items group by order_id) as c on c.order_id = o.id",
     False),  # grouped by the key: one row per order
    ("left join (select distinct order_id from wh.shop.items) as c on c.order_id = o.id", False),
    ("left join (select order_id, price from wh.shop.items) as c on c.order_id = o.id", True),
    ("left join (select id, state from wh.shop.customers) as c on c.id = o.customer_id", False),
])
def test_provenance_keeps_every_join_that_can_change_the_rows(join, kept):
    tree = qualify_query(f"select o.id, c.* from wh.shop.orders as o {join}", SCHEMA, "duckdb")
    sql = provenance_query(tree, "id", UNIQUE).sql("duckdb").lower()
    assert (" join " in sql) is kept, sql


# Rows where dropping a join changes the answer: order 2 has no customer, order 1 has two items.
ROWS = """
create schema wh.shop;
create table wh.shop.orders as select * from (values (1, 10, 'done', '5', timestamp '2020-01-01'),
    (2, 99, 'done', '7', timestamp '2020-02-01'), (3, 11, 'test', '1', timestamp '2020-03-01'))
    t(id, customer_id, status, amount, placed_at);
create table wh.shop.customers as select * from (values (10, 'SP', 'Ana'), (11, 'RJ', 'Bia')) t(id, state, name);
create table wh.shop.items as select * from (values (1, 2.5), (1, 4.0), (3, 1.0)) t(order_id, price);
"""


def test_every_column_s_provenance_query_returns_the_model_s_column():
    con = duckdb.connect()
    con.execute("attach ':memory:' as wh")
    con.execute(ROWS)
    model = MODEL.replace("    o.mystery,\n    x.y as ghost\n", "    o.placed_at\n").replace(
        "left join wh.shop.nowhere as x on x.id = o.id\n", "")
    for unique in (frozenset(), UNIQUE):
        columns = model_lineage(qualify_query(model, SCHEMA, "duckdb"), SCHEMA, "duckdb", unique)
        assert len(columns) == 8
        for name, col in columns.items():
            want = sorted(con.execute(f"select {name} from ({model})").fetchall(), key=repr)
            assert sorted(con.execute(col.provenance.sql("duckdb")).fetchall(), key=repr) == want, name


def test_upstream_models_expand_so_lineage_reaches_the_tables():
    upstream = "select o.id as order_id, o.amount from wh.shop.orders as o"
    model = "select order_id, max(amount) as top_amount from wh.dp.upstream group by order_id"
    tree = qualify_query(model, SCHEMA, "duckdb", sources={'"wh"."dp"."upstream"': upstream})
    lineage = model_lineage(tree, SCHEMA, "duckdb")
    assert lineage["order_id"].edges == (Edge(ORDERS, "id", "rename"),)
    assert lineage["top_amount"].edges == (Edge(ORDERS, "amount", "aggregate"),)
    assert not lineage["order_id"].derived and lineage["top_amount"].derived


def test_rename_tables_gives_database_names_and_keeps_aliases(lineage):
    renamed = rename_tables(lineage["state"].provenance, {ORDERS: "orders", CUSTOMERS: "customers"})
    assert renamed.sql("duckdb").startswith("SELECT c.state AS state FROM orders AS o JOIN customers AS c")
    assert source_columns(renamed) >= {("orders", "customer_id"), ("customers", "state")}


def test_sql_that_does_not_parse_is_one_line():
    with pytest.raises(DptoolError, match=r"^cannot parse SQL") as info:
        qualify_query("select from where (", SCHEMA, "duckdb")
    assert "\n" not in str(info.value)
