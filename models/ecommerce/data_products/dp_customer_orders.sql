-- One row per person (customer_unique_id): how often and how much they buy, and since when.
with order_values as (
    select
        p.order_id,
        sum(p.payment_value) as order_value
    from {{ ref('order_payments') }} as p
    group by p.order_id
)

select
    c.customer_unique_id,
    -- a person may have ordered to several states: the greatest code keeps one row per person
    max(c.customer_state) as customer_state,
    count(distinct o.order_id) as orders_count,
    min(o.order_purchase_timestamp) as first_purchase_at,
    max(o.order_purchase_timestamp) as last_purchase_at,
    sum(v.order_value) as total_paid,
    case when count(distinct o.order_id) > 1 then 1 else 0 end as is_repeat_customer
from {{ ref('customers') }} as c
inner join {{ ref('orders') }} as o on o.customer_id = c.customer_id
left join order_values as v on v.order_id = o.order_id
group by c.customer_unique_id
