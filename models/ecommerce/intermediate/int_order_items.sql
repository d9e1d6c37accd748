-- Order items with their order, customer, seller and English category, and the days since the buyer's
-- (the person's) first order.
select
    i.order_id,
    i.order_item_id,
    i.seller_id,
    i.price,
    i.freight_value,
    o.order_status,
    o.order_purchase_timestamp,
    o.order_delivered_customer_date,
    o.order_estimated_delivery_date,
    c.customer_state,
    c.customer_city,
    s.seller_state,
    t.product_category_name_english,
    b.days_since_first_purchase
from {{ ref('order_items') }} as i
inner join {{ ref('orders') }} as o on o.order_id = i.order_id
inner join {{ ref('int_orders') }} as b on b.order_id = i.order_id
inner join {{ ref('customers') }} as c on c.customer_id = o.customer_id
inner join {{ ref('sellers') }} as s on s.seller_id = i.seller_id
inner join {{ ref('products') }} as p on p.product_id = i.product_id
left join {{ ref('product_category_name_translation') }} as t
    on t.product_category_name = p.product_category_name
