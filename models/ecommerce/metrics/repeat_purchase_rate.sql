-- One row per order; an order is a repeat purchase when its buyer (the person) had ordered before.
select
    order_id,
    customer_unique_id,
    order_status,
    order_purchase_timestamp,
    customer_state,
    customer_city,
    buyer_order_number,
    case when buyer_order_number > 1 then 1.0 else 0.0 end as repeat_order_flag
from {{ ref('int_orders') }}
