-- One row per payment record.
select
    p.order_id,
    p.payment_sequential,
    p.payment_type,
    o.order_status,
    o.order_purchase_timestamp,
    o.customer_state,
    o.customer_city,
    case when p.payment_type = 'credit_card' then 1.0 else 0.0 end as credit_card_flag
from {{ ref('order_payments') }} as p
inner join {{ ref('int_orders') }} as o on o.order_id = p.order_id
