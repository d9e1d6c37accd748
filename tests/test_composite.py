"""A composite metric on the demo project: computed from its components, each under its own rules (issue 12).

GMV per Active Seller is GMV / Active Seller Count. Revenue Recognition (POL-FIN-003) governs GMV, and so the
composite: the gold applies it to the numerator only. dbt compiles the gold model (`dbt compile --inline`, nothing
is written to the warehouse); its rows must equal the same figure written by hand from the rule documents over the
agent-visible tables, and differ from what one query over the composite's rows used to give.
"""

from __future__ import annotations

import json

import pytest

from dptool.generate.materialize import jinja_literal
from dptool.project.warehouse import Warehouse

METRIC = "gmv_per_active_seller"


@pytest.fixture(scope="module")
def tables(demo_catalog) -> dict[str, str]:
    return {t.name: t.relation_name for t in demo_catalog.tables.values() if t.domain == "ecommerce"}


def _gold_rows(project, catalog, rules: list[str], where: list[str]) -> dict[str, float]:
    args = (f"metric={jinja_literal(METRIC)}, rules={jinja_literal(catalog.rules_argument(METRIC, rules))}, "
            f"where={jinja_literal(where)}")
    results = project.run("compile", "--inline", "{{ dptool.gold(" + args + ") }}")
    (sql,) = [r.compiled_code for r in results if r.compiled_code]
    with Warehouse.of(project.connection()) as wh:
        _, rows = wh.query(sql)
    return {variant: value for variant, value in rows}


def _by_hand(wh: Warehouse, t: dict[str, str], window: str) -> tuple[float, float]:
    """(the composite as the documents define it, what one query over the composite's own rows gave)."""
    items = f"""
        select i.order_id, i.seller_id, i.price, o.order_status,
               case when tr.product_category_name_english = 'watches_gifts' then 0 else i.freight_value end as freight
        from {t['order_items']} i
        join {t['orders']} o on o.order_id = i.order_id
        join {t['customers']} c on c.customer_id = o.customer_id
        join {t['sellers']} s on s.seller_id = i.seller_id
        join {t['products']} p on p.product_id = i.product_id
        left join {t['product_category_name_translation']} tr on tr.product_category_name = p.product_category_name
        where {window}"""
    # POL-FIN-003: canceled and unavailable orders are never revenue; the watches-and-gifts freight is not value
    gmv = f"select sum(price + freight) from ({items}) x where order_status not in ('canceled', 'unavailable')"
    # Active Seller Definition: an item of a delivered order, and an average review score of at least 3.0 over
    # every review of the orders the seller took part in (a seller never reviewed meets it)
    scores = f"""
        select so.seller_id, avg(r.review_score) as score
        from (select distinct seller_id, order_id from {t['order_items']}) so
        join {t['order_reviews']} r on r.order_id = so.order_id group by so.seller_id"""
    active = f"""select count(distinct x.seller_id) from ({items}) x
                 left join ({scores}) sc on sc.seller_id = x.seller_id
                 where x.order_status = 'delivered' and (sc.score is null or sc.score >= 3.0)"""
    _, ((numerator,),) = wh.query(gmv)
    _, ((denominator,),) = wh.query(active)
    # before: one aggregate over the composite's item rows, with Revenue Recognition nowhere
    all_value = f"select sum(price + freight) from ({items}) x"
    _, ((old_numerator,),) = wh.query(all_value)
    return float(numerator) / denominator, float(old_numerator) / denominator


def test_a_component_rule_changes_the_composite(built_demo_copy, demo_catalog, tables):
    where = ["order_purchase_timestamp >= cast('2017-07-01' as timestamp)",
             "order_purchase_timestamp < cast('2018-01-01' as timestamp)"]
    rules = [r.id for r in demo_catalog.governing_rules(METRIC)]
    assert rules == ["active_seller_definition", "insured_freight_exclusion", "revenue_recognition"]
    rows = _gold_rows(built_demo_copy, demo_catalog, rules, where)
    with Warehouse.of(built_demo_copy.connection()) as wh:
        window = "o.order_purchase_timestamp >= cast('2017-07-01' as timestamp) and " \
                 "o.order_purchase_timestamp < cast('2018-01-01' as timestamp)"
        expected, one_model = _by_hand(wh, tables, window)
    assert rows["gold"] == pytest.approx(expected, rel=1e-12)
    assert abs(rows["gold"] - one_model) > 1.0, json.dumps(rows)  # revenue recognition moves it by reais
    # the rule alone, routed to GMV: the gold moves, the base (no rule) does not
    only = _gold_rows(built_demo_copy, demo_catalog, ["revenue_recognition"], where)
    # approx: DuckDB adds doubles in thread order, so two runs of one sum may differ in the 15th digit
    assert only["base"] == pytest.approx(rows["base"], rel=1e-12)
    assert abs(only["gold"] - only["base"]) > 1.0, json.dumps(only)
