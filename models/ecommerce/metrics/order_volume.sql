-- One row per order.
select
    order_id,
    order_status,
    order_purchase_timestamp,
    customer_state,
    customer_city
from {{ ref('int_orders') }}
