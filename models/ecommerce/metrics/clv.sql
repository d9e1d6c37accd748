-- One row per order with items: its value (item price plus freight) and who bought it.
with order_values as (
    select order_id, sum(price + freight_value) as order_value
    from {{ ref('order_items') }}
    group by order_id
)

select
    o.order_id,
    o.customer_id,
    o.customer_unique_id,
    o.customer_id as buyer_id,
    o.order_status,
    o.order_purchase_timestamp,
    o.customer_state,
    o.customer_city,
    o.days_since_first_purchase,
    v.order_value
from {{ ref('int_orders') }} as o
inner join order_values as v on v.order_id = o.order_id
