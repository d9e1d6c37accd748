-- One row per order, whatever its status.
select
    order_id,
    order_status,
    order_purchase_timestamp,
    customer_state,
    customer_city,
    case when order_status = 'canceled' then 1.0 else 0.0 end as canceled_flag
from {{ ref('int_orders') }}
