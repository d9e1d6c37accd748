-- Order items with the seller's average review score across every review on record of the orders the
-- seller took part in (each order's review counted once per seller).
with seller_orders as (
    select distinct seller_id, order_id
    from {{ ref('order_items') }}
),

seller_reviews as (
    select
        so.seller_id,
        avg(r.review_score) as seller_avg_review_score
    from seller_orders as so
    inner join {{ ref('order_reviews') }} as r on r.order_id = so.order_id
    group by so.seller_id
)

select
    i.order_id,
    i.order_item_id,
    i.seller_id,
    i.price,
    i.freight_value,
    i.order_status,
    i.order_purchase_timestamp,
    i.customer_state,
    i.customer_city,
    i.seller_state,
    i.product_category_name_english,
    sr.seller_avg_review_score
from {{ ref('int_item_facts') }} as i
left join seller_reviews as sr on sr.seller_id = i.seller_id
