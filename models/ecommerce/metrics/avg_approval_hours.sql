-- One row per order whose payment was approved.
select
    order_id,
    order_status,
    order_purchase_timestamp,
    order_approved_at,
    customer_state,
    customer_city,
    {{ dbt.datediff('order_purchase_timestamp', 'order_approved_at', 'hour') }} as approval_hours
from {{ ref('int_orders') }}
where order_approved_at is not null
