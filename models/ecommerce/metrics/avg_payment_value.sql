-- One row per payment record.
select
    p.order_id,
    p.payment_sequential,
    p.payment_type,
    p.payment_installments,
    p.payment_value,
    o.order_status,
    o.order_purchase_timestamp,
    o.customer_state,
    o.customer_city
from {{ ref('order_payments') }} as p
inner join {{ ref('int_orders') }} as o on o.order_id = p.order_id
