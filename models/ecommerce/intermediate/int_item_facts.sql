-- Order items with their order, customer, seller and category, plus the attributes that item-level
-- metrics need: the order's lead category (the category of its highest-priced item), the number of
-- items in the order, and the seller's rank by lifetime item value.
with items as (
    select
        i.order_id,
        i.order_item_id,
        i.product_id,
        i.seller_id,
        i.shipping_limit_date,
        i.price,
        i.freight_value,
        o.order_status,
        o.order_purchase_timestamp,
        o.order_delivered_carrier_date,
        c.customer_state,
        c.customer_city,
        s.seller_state,
        t.product_category_name_english
    from {{ ref('order_items') }} as i
    inner join {{ ref('orders') }} as o on o.order_id = i.order_id
    inner join {{ ref('customers') }} as c on c.customer_id = o.customer_id
    inner join {{ ref('sellers') }} as s on s.seller_id = i.seller_id
    inner join {{ ref('products') }} as p on p.product_id = i.product_id
    left join {{ ref('product_category_name_translation') }} as t
        on t.product_category_name = p.product_category_name
),

ranked_items as (
    select
        items.*,
        row_number() over (
            partition by order_id order by price desc, order_item_id
        ) as price_rank_in_order,
        count(*) over (partition by order_id) as items_in_order
    from items
),

lead_items as (
    select order_id, product_category_name_english as lead_product_category
    from ranked_items
    where price_rank_in_order = 1
),

seller_value as (
    select
        seller_id,
        rank() over (order by sum(price + freight_value) desc) as seller_value_rank
    from items
    group by seller_id
)

select
    r.order_id,
    r.order_item_id,
    r.product_id,
    r.seller_id,
    r.shipping_limit_date,
    r.price,
    r.freight_value,
    r.order_status,
    r.order_purchase_timestamp,
    r.order_delivered_carrier_date,
    r.customer_state,
    r.customer_city,
    r.seller_state,
    r.product_category_name_english,
    l.lead_product_category,
    r.items_in_order,
    v.seller_value_rank
from ranked_items as r
inner join lead_items as l on l.order_id = r.order_id
inner join seller_value as v on v.seller_id = r.seller_id
