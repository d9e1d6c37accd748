"""Points an analyst had to guess, each stated in the kb (the metric's description or the domain conventions) as
the gold computes it, and checked against the gold: on the built demo, a gold model of each metric (no policy)
and the readings it could be confused with, computed from the same tables in one model each."""

from __future__ import annotations

import math
import shutil

import pytest

from dptool.project.catalog import load_catalog
from dptool.project.warehouse import Warehouse

# metric -> (what the model computes: the gold's value beside each reading, from the project's own tables)
CHECKS = {
    "reviews": """
        with g as ({{ dptool.gold('csat') }})
        select (select value from g where variant = 'gold') as gold,
               avg(case when r.review_score >= 4 then 1.0 else 0.0 end) as every_order,
               avg(case when r.review_score >= 4 and o.order_status = 'delivered' then 1.0
                        when o.order_status = 'delivered' then 0.0 end) as delivered_only
        from {{ ref('order_reviews') }} as r inner join {{ ref('orders') }} as o on o.order_id = r.order_id""",
    "revenue_per_order": """
        with g as ({{ dptool.gold('revenue_per_order') }}),
        v as (select sum(price + freight_value) as value, count(distinct order_id) as orders
              from {{ ref('order_items') }})
        select (select value from g where variant = 'gold') as gold, v.value / v.orders as orders_with_items,
               v.value / (select count(*) from {{ ref('orders') }}) as every_order
        from v""",
    "active_sellers": """
        with g as ({{ dptool.gold('active_sellers', where=["order_purchase_timestamp >= '2018-07-01'"]) }})
        select (select value from g where variant = 'gold') as gold, count(distinct i.seller_id) as any_status,
               count(distinct case when o.order_status = 'delivered' then i.seller_id end) as delivered_only
        from {{ ref('order_items') }} as i inner join {{ ref('orders') }} as o on o.order_id = i.order_id
        where o.order_purchase_timestamp >= '2018-07-01'""",
    "net_cash_flow": """
        with g as ({{ dptool.gold('net_cash_flow') }})
        select (select value from g where variant = 'gold') as gold,
               sum(case when type = 'PRIJEM' then amount else -amount end) as vyber_a_debit,
               sum(case when type = 'PRIJEM' then amount when type = 'VYDAJ' then -amount else 0 end)
                   as vydaj_only
        from {{ ref('int_banking_transactions') }}""",
    "missing_mode": """
        with g as ({{ dptool.gold('transaction_count', group_by=['operation'], shape='grouped') }})
        select count(*) filter (where operation is null) as gold, 1 as own_group, 0 as left_out
        from g where variant = 'gold'""",
    "avg_client_age": """
        with g as ({{ dptool.gold('avg_client_age') }})
        select (select value from g where variant = 'gold') as gold,
               avg(floor((date - cast(birth_number as integer)) / 10000.0)) as raw_digits,
               avg(floor((date - (cast(birth_number as integer) - case when mod(cast(floor(cast(birth_number as
                   integer) / 100) as integer), 100) > 50 then 5000 else 0 end)) / 10000.0)) as converted
        from {{ ref('int_banking_dispositions') }}""",
}
# where the kb says it: (metric whose description says it, or the conventions of a domain, the words)
STATED = {
    "reviews": ("csat", "not only delivered ones"),
    "revenue_per_order": ("revenue_per_order", "those with at least one item"),
    "active_sellers": ("active_sellers", "Without that policy (withdrawn, or not applied), every seller with an "
                                         "item of an order placed in the period counts, whatever the order's status"),
    "net_cash_flow": ("net_cash_flow", "VYBER rows (type VYBER, a cash withdrawal) are subtracted as VYDAJ rows are"),
    "missing_mode": ("conventions:banking", "A posting without a mode (NULL: interest credited, UROK) is a mode "
                                            "group of its own"),
    "avg_client_age": ("avg_client_age", "Without the Date Conversion policy, age is the whole years of (opening "
                                         "date − birth digits) / 10000 on the raw YYMMDD numbers"),
}
REVIEW_METRICS = ("csat", "avg_review_score", "low_review_rate", "review_comment_rate", "net_review_score")


@pytest.fixture(scope="module")
def readings(built_demo_copy) -> dict[str, dict[str, float]]:
    project = built_demo_copy
    folder = project.project_dir / "models" / "kb_checks"
    folder.mkdir(exist_ok=True)
    for name, sql in CHECKS.items():
        (folder / f"kb_check_{name}.sql").write_text(sql.strip() + "\n", encoding="utf-8")
    try:
        project.run("compile", "--select", "path:models/kb_checks")
        out = {}
        with Warehouse.of(project.connection()) as wh:
            for name in CHECKS:
                sql = next(project.target_dir.joinpath("compiled").rglob(f"kb_check_{name}.sql"))
                columns, rows = wh.query(sql.read_text(encoding="utf-8"))
                out[name] = {c: float(v) for c, v in zip(columns, rows[0], strict=True)}
        return out
    finally:
        shutil.rmtree(folder)
        project.run("parse")  # the copy is shared: its manifest must not name the files just removed


@pytest.mark.parametrize("name", list(CHECKS))
def test_the_gold_takes_the_stated_reading_and_the_other_differs(readings, name):
    gold, stated, other = readings[name].values()
    assert math.isclose(gold, stated, rel_tol=1e-9), readings[name]
    assert not math.isclose(gold, other, rel_tol=1e-6), readings[name]  # the guess could change the answer


@pytest.mark.parametrize("name", list(STATED))
def test_the_kb_states_it_where_an_analyst_looks(demo_manifest, name):
    catalog = load_catalog(demo_manifest)
    where, words = STATED[name]
    text = catalog.conventions[where.split(":")[1]] if where.startswith("conventions:") else \
        catalog.metrics[where].description
    assert words in " ".join(text.split()), text


def test_every_review_metric_says_whose_reviews_it_reads(demo_manifest):
    catalog = load_catalog(demo_manifest)
    for metric in REVIEW_METRICS + ("avg_review_response_days",):
        assert "not only delivered ones" in catalog.metrics[metric].description, metric
    assert "without" not in catalog.metrics["avg_borrower_age"].description.split("Date Conversion")[0].lower()[-9:]
    assert "Without the Date Conversion policy, age is the whole years of (grant date − birth digits)" in \
        catalog.metrics["avg_borrower_age"].description
