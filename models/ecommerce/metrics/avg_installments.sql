select
    p.order_id,
    p.payment_sequential,
    p.payment_type,
    p.payment_installments,
    o.order_status,
    o.order_purchase_timestamp,
    c.customer_state,
    c.customer_city
from {{ ref('order_payments') }} as p
inner join {{ ref('orders') }} as o on o.order_id = p.order_id
inner join {{ ref('customers') }} as c on c.customer_id = o.customer_id
