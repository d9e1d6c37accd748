"""SQL over sqlglot: literals from data, a variant cut out of a compiled gold model, relations renamed."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
import sqlglot

from dptool.errors import DptoolError
from dptool.sql import (
    double_arithmetic,
    equals,
    in_window,
    literal,
    pretty,
    relation_key,
    rename_relations,
    variant_query,
)

FIXTURES = Path(__file__).parent / "fixtures"
COMPILED = (FIXTURES / "compiled_gold_ranking.sql").read_text(encoding="utf-8")
TABLES = ("orders", "customers", "order_reviews", "sellers")
MAPPING = {("dptool_demo", "ecommerce", t): ("ecommerce", t) for t in TABLES}


@pytest.fixture
def con():
    con = duckdb.connect()
    yield con
    con.close()


@pytest.mark.parametrize(
    "value",
    ["Sant'Ana", "D'Ávila d''Oeste", "São Paulo", "C:\\new\\table", "", "50% off; drop table x", 42, -7, 2.5,
     True, False, datetime(2017, 3, 1, 8, 30, 5)],
)
def test_literal_round_trips_through_duckdb(con, value):
    assert con.execute(f"select {literal(value).sql('duckdb')}").fetchone()[0] == value


def test_literal_text():
    assert literal("Sant'Ana").sql("duckdb") == "'Sant''Ana'"
    assert literal("Sant'Ana").sql("spark") == "'Sant\\'Ana'"
    assert literal(None).sql("duckdb") == "NULL"
    assert literal(-2.5).sql("duckdb") == "-2.5"
    assert literal(True).sql("duckdb") == "TRUE"


def test_literal_of_date_is_a_midnight_timestamp(con):
    sql = literal(date(2017, 1, 2)).sql("duckdb")
    assert sql == "CAST('2017-01-02' AS TIMESTAMP)"
    assert con.execute(f"select {sql}").fetchone()[0] == datetime(2017, 1, 2, 0, 0)


def test_literal_of_decimal_round_trips(con):
    assert con.execute(f"select {literal(Decimal('1.50')).sql('duckdb')}").fetchone()[0] == Decimal("1.50")


def test_equals():
    assert equals("customer_city", "Sant'Ana", "duckdb") == "customer_city = 'Sant''Ana'"
    assert equals("customer_city", "Sant'Ana", "spark") == "customer_city = 'Sant\\'Ana'"
    assert equals("review_score", 5, "duckdb") == "review_score = 5"


def test_equals_filters_an_apostrophe_value(con):
    con.execute("create table c as select * from (values ('Sant''Ana'), ('Santana'), ('Sant''Ana')) t(city)")
    predicate = equals("city", "Sant'Ana", "duckdb")
    assert con.execute(f"select count(*) from c where {predicate}").fetchone()[0] == 2


def test_in_window():
    assert in_window("order_purchase_timestamp", date(2017, 7, 1), date(2017, 10, 1), "duckdb") == [
        "order_purchase_timestamp >= CAST('2017-07-01 00:00:00' AS TIMESTAMP)",
        "order_purchase_timestamp < CAST('2017-10-01 00:00:00' AS TIMESTAMP)",
    ]


def test_in_window_is_half_open(con):
    con.execute("create table o as select * from (values (timestamp '2017-06-30 23:59:59'), "
                "(timestamp '2017-07-01 00:00:00'), (timestamp '2017-09-30 23:59:59'), "
                "(timestamp '2017-10-01 00:00:00')) t(ts)")
    where = " and ".join(in_window("ts", date(2017, 7, 1), date(2017, 10, 1), "duckdb"))
    assert con.execute(f"select count(*) from o where {where}").fetchone()[0] == 2


def test_variant_query_keeps_reachable_ctes_in_order():
    query = variant_query(COMPILED, "dptool_gold", ["rank"], "duckdb")
    with_ = query.args.get("with_") or query.args.get("with")
    # dptool_base and the unread __dbt__cte__sellers_by_state leave; the rest keep their compiled order
    assert [c.alias for c in with_.expressions] == ["__dbt__cte__int_order_reviews", "__dbt__cte__csat", "dptool_gold"]
    base = variant_query(COMPILED, "dptool_base", [], "duckdb")
    with_ = base.args.get("with_") or base.args.get("with")
    assert [c.alias for c in with_.expressions] == ["__dbt__cte__int_order_reviews", "__dbt__cte__csat", "dptool_base"]
    assert base.sql("duckdb").endswith(") SELECT * FROM dptool_base")


def test_variant_query_pretty():
    query = rename_relations(variant_query(COMPILED, "dptool_gold", ["rank"], "duckdb"), MAPPING)
    assert pretty(query, "duckdb") + "\n" == (FIXTURES / "variant_gold_ranking.sql").read_text(encoding="utf-8")


def test_or_predicate_stays_parenthesized():
    text = pretty(variant_query(COMPILED, "dptool_gold", ["rank"], "duckdb"), "duckdb")
    where = " ".join(text[text.index("WHERE"):text.index("GROUP BY")].split())
    assert where == ("WHERE ( customer_state <> 'RR' ) AND ( review_comment_message IS NULL OR "
                     "review_comment_message NOT LIKE '%@%' )")


def _load_demo_tables(con):
    con.execute("create schema ecommerce")
    con.execute("create table ecommerce.customers as select * from (values ('c1', 'SP', 'São Paulo'), "
                "('c2', 'SP', 'Campinas'), ('c3', 'RR', 'Boa Vista'), ('c4', 'RJ', 'Sant''Ana')) "
                "t(customer_id, customer_state, customer_city)")
    con.execute("create table ecommerce.orders as select * from (values ('o1', 'c1'), ('o2', 'c2'), ('o3', 'c3'), "
                "('o4', 'c4')) t(order_id, customer_id)")
    con.execute("create table ecommerce.order_reviews as select * from (values ('r1', 'o1', 5, null), "
                "('r2', 'o2', 1, 'mail me at a@b.com'), ('r3', 'o3', 1, 'late'), ('r4', 'o4', 5, 'fine')) "
                "t(review_id, order_id, review_score, review_comment_message)")
    con.execute("create table ecommerce.sellers as select 's1' as seller_id, 'SP' as seller_state")


def test_variants_execute_after_rename(con):
    _load_demo_tables(con)
    gold = pretty(rename_relations(variant_query(COMPILED, "dptool_gold", ["rank"], "duckdb"), MAPPING), "duckdb")
    base = pretty(rename_relations(variant_query(COMPILED, "dptool_base", ["rank"], "duckdb"), MAPPING), "duckdb")
    # unparenthesized, `state <> 'RR' and msg is null or msg not like '%@%'` would keep RR's 'late' review
    assert con.execute(gold).fetchall() == [("RJ", Decimal("1.0"), 1), ("SP", Decimal("1.0"), 2)]
    assert con.execute(base).fetchall() == [("RJ", 1, 1), ("SP", Decimal("0.5"), 2), ("RR", 0, 3)]


def test_variant_query_unknown_cte():
    with pytest.raises(DptoolError) as info:
        variant_query(COMPILED, "dptool_rule_9", [], "duckdb")
    assert str(info.value) == "compiled SQL has no CTE named 'dptool_rule_9'"
    with pytest.raises(DptoolError, match="^compiled SQL has no CTE named 'dptool_gold'$"):
        variant_query("select 1 as value", "dptool_gold", [], "duckdb")


def test_variant_query_unparsable():
    with pytest.raises(DptoolError, match="^cannot parse compiled SQL: "):
        variant_query("select from where (", "dptool_gold", [], "duckdb")


def test_variant_query_unparsable_error_is_one_line():
    with pytest.raises(DptoolError) as info:
        variant_query("select from where (", "dptool_gold", [], "duckdb")
    assert "\n" not in str(info.value)
    assert "\x1b" not in str(info.value)


def test_rename_relations_keeps_aliases():
    query = sqlglot.parse_one(
        'select o.order_id, c.customer_state from "dptool_demo"."ecommerce"."orders" as o '
        'join "DPTOOL_DEMO"."Ecommerce"."Customers" c on c.customer_id = o.customer_id '
        'join "dptool_demo"."staging"."orders" s on s.order_id = o.order_id', read="duckdb")
    renamed = rename_relations(query, MAPPING)
    assert renamed.sql("duckdb") == (
        'SELECT o.order_id, c.customer_state FROM "ecommerce"."orders" AS o '
        'JOIN "ecommerce"."customers" AS c ON c.customer_id = o.customer_id '
        'JOIN "dptool_demo"."staging"."orders" AS s ON s.order_id = o.order_id')
    # the input is left as it was
    assert '"dptool_demo"."ecommerce"."orders" AS o' in query.sql("duckdb")


def test_rename_relations_without_alias():
    query = sqlglot.parse_one('select count(*) from "dptool_demo"."ecommerce"."sellers"', read="duckdb")
    assert rename_relations(query, MAPPING).sql("duckdb") == 'SELECT COUNT(*) FROM "ecommerce"."sellers"'


def test_relation_key():
    assert relation_key('"dptool_demo"."ecommerce"."orders"', "duckdb") == ("dptool_demo", "ecommerce", "orders")
    assert relation_key('"Dev"."Ecommerce"."Order Items"', "duckdb") == ("dev", "ecommerce", "order items")
    assert relation_key("analytics.orders", "duckdb") == ("", "analytics", "orders")


def test_variants_of_demo_model_reproduce_its_rows(demo_project, demo_manifest):
    node = demo_manifest["nodes"]["model.dptool_demo.csat__rule_variants"]
    compiled = node["compiled_code"]
    rule_2 = variant_query(compiled, "dptool_rule_2", [], "duckdb").sql("duckdb")
    # the privacy rule's `a or b`, rendered by the dbt package, keeps its own parentheses
    assert "WHERE (review_comment_message IS NULL OR review_comment_message NOT LIKE '%@%')" in rule_2
    con = duckdb.connect(demo_project.connection().path, read_only=True)
    try:
        stored = dict(con.execute(f"select variant, value from {node['relation_name']}").fetchall())
        found = {variant: con.execute(variant_query(compiled, cte, [], "duckdb").sql("duckdb")).fetchall()
                 for variant, cte in [("base", "dptool_base"), ("csat_neutral_exclusion", "dptool_rule_1"),
                                      ("review_privacy_quarantine", "dptool_rule_2")]}
    finally:
        con.close()
    assert found == {variant: [(value,)] for variant, value in stored.items()}
    assert len(set(stored.values())) == 3


def test_variant_query_drops_nested_copies_of_top_level_ctes():
    # dbt injects an ephemeral's CTE into a nested WITH in some runs and not in others: one text for both
    hoisted = ("with __dbt__cte__a as (select 1 as x), "
               "__dbt__cte__b as (with inner_cte as (select x from __dbt__cte__a) select x from inner_cte), "
               "dptool_gold as (select x as value from __dbt__cte__b) select * from dptool_gold")
    nested = ("with __dbt__cte__a as (select 1 as x), __dbt__cte__b as (with __dbt__cte__a as (select 1 as x), "
              "inner_cte as (select x from __dbt__cte__a) select x from inner_cte), "
              "dptool_gold as (select x as value from __dbt__cte__b) select * from dptool_gold")
    one, two = (variant_query(sql, "dptool_gold", [], "duckdb").sql("duckdb") for sql in (hoisted, nested))
    assert one == two
    assert one.count("__dbt__cte__a AS (") == 1


def test_double_arithmetic_computes_quotients_and_averages_in_doubles_on_spark():
    """Spark keeps a DECIMAL quotient at 6 digits and a DECIMAL average at s + 4 where DuckDB computes DOUBLEs:
    on Spark, dptool reads each quotient's numerator and each average's argument cast to a double."""
    sql = ("select 1.0 * sum(discount) / sum(subtotal) as ratio, avg(case when late then 1.0 else 0.0 end) as rate,"
           " avg(cast(x as double)) as plain, 7 div 2 as whole, sum(subtotal) * 1.5 as product from t")
    assert double_arithmetic(sql, "spark") == (
        "SELECT CAST(1.0 * SUM(discount) AS DOUBLE) / SUM(subtotal) AS ratio,"
        " AVG(CAST(CASE WHEN late THEN 1.0 ELSE 0.0 END AS DOUBLE)) AS rate, AVG(CAST(x AS DOUBLE)) AS plain,"
        " 7 DIV 2 AS whole, SUM(subtotal) * 1.5 AS product FROM t")
    assert double_arithmetic(sql, "duckdb") == sql and double_arithmetic(sql, "postgres") == sql
    assert double_arithmetic("select cast(x as double) / 2 from t", "spark") == "select cast(x as double) / 2 from t"
    assert double_arithmetic("select (", "spark") == "select ("  # a query that does not parse goes as it is
    # on DuckDB the cast changes nothing: its quotient and average of DECIMALs are DOUBLEs already
    con = duckdb.connect()
    try:
        values = "(values (1.50::decimal(10, 2), 27.05::decimal(10, 2)), (2.25, 40.60), (0.10, 3.00)) t(a, b)"
        text = "select 1.0 * sum(a) / sum(b), avg(case when a > 2 then 1.0 else 0.0 end) from " + values
        on_spark = double_arithmetic(sqlglot.transpile(text, read="duckdb", write="spark")[0], "spark")
        assert con.execute(sqlglot.transpile(on_spark, read="spark", write="duckdb")[0]).fetchall() == \
            con.execute(text).fetchall()
    finally:
        con.close()
