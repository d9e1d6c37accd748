-- Delivered orders with their customer and delivery timings, in calendar days.
select
    o.order_id,
    o.order_status,
    o.order_purchase_timestamp,
    o.order_approved_at,
    o.order_delivered_customer_date,
    o.order_estimated_delivery_date,
    c.customer_state,
    c.customer_city,
    {{ dptool.days_between('o.order_purchase_timestamp', 'o.order_delivered_customer_date') }} as delivery_days,
    {{ dptool.days_between('o.order_estimated_delivery_date', 'o.order_delivered_customer_date') }} as delivery_delay_days
from {{ ref('orders') }} as o
inner join {{ ref('customers') }} as c on c.customer_id = o.customer_id
where o.order_status = 'delivered'
  and o.order_delivered_customer_date is not null
