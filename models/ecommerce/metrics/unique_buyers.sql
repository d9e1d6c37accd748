-- One row per order; buyer_id is what the catalog counts as a buyer: the order's customer record.
select
    order_id,
    customer_id,
    customer_unique_id,
    customer_id as buyer_id,
    order_status,
    order_purchase_timestamp,
    customer_state,
    customer_city
from {{ ref('int_orders') }}
