-- One row per delivered order; late is the complement of on time.
select
    order_id,
    order_status,
    order_purchase_timestamp,
    customer_state,
    customer_city,
    delivery_delay_days,
    case when delivery_delay_days <= 0 then 1.0 when delivery_delay_days > 0 then 0.0 end as on_time_flag
from {{ ref('int_delivered_orders') }}
