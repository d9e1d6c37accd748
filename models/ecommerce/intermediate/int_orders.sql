-- One row per order with its customer and the buyer's purchase history. A buyer is the person
-- (customers.customer_unique_id), who gets a new customer record with every order.
select
    o.order_id,
    o.customer_id,
    c.customer_unique_id,
    c.customer_state,
    c.customer_city,
    o.order_status,
    o.order_purchase_timestamp,
    o.order_approved_at,
    o.order_delivered_carrier_date,
    o.order_delivered_customer_date,
    o.order_estimated_delivery_date,
    row_number() over (
        partition by c.customer_unique_id
        order by o.order_purchase_timestamp, o.order_id
    ) as buyer_order_number,
    {{ dptool.days_between(
        'min(o.order_purchase_timestamp) over (partition by c.customer_unique_id)',
        'o.order_purchase_timestamp') }} as days_since_first_purchase
from {{ ref('orders') }} as o
inner join {{ ref('customers') }} as c on c.customer_id = o.customer_id
