-- Every order with items is paid exactly its price plus freight (to the cent): the demo data's
-- payments and items agree, so revenue questions have one answer whichever table an agent reads.
with items as (
    select order_id, sum(price + freight_value) as item_total
    from {{ ref('order_items') }}
    group by order_id
),
payments as (
    select order_id, sum(payment_value) as paid
    from {{ ref('order_payments') }}
    group by order_id
)
select items.order_id, items.item_total, payments.paid
from items
left join payments on payments.order_id = items.order_id
where payments.paid is null or abs(items.item_total - payments.paid) > 0.01
