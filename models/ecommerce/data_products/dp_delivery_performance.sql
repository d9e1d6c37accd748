-- Delivered orders: how long each took to reach the customer, how late it was against the promise,
-- and where and when it was bought.
select
    o.order_id,
    o.order_status,
    o.order_purchase_timestamp,
    o.order_approved_at,
    o.order_delivered_customer_date,
    o.order_estimated_delivery_date,
    c.customer_state,
    c.customer_city,
    extract(year from o.order_purchase_timestamp) as purchase_year,
    {{ dbt.date_trunc('month', 'o.order_purchase_timestamp') }} as purchase_month,
    {{ dptool.days_between('o.order_purchase_timestamp', 'o.order_delivered_customer_date') }} as delivery_days,
    {{ dptool.days_between('o.order_estimated_delivery_date', 'o.order_delivered_customer_date') }} as delay_days,
    case
        when {{ dptool.days_between('o.order_estimated_delivery_date', 'o.order_delivered_customer_date') }} > 0
        then 1 else 0
    end as is_late
from {{ ref('orders') }} as o
inner join {{ ref('customers') }} as c on c.customer_id = o.customer_id
where o.order_status = 'delivered'
  and o.order_delivered_customer_date is not null
