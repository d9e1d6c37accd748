select
    order_id,
    order_status,
    order_purchase_timestamp,
    order_approved_at,
    order_delivered_customer_date,
    customer_state,
    customer_city,
    delivery_days
from {{ ref('int_delivered_orders') }}
