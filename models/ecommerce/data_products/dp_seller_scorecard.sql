-- One row per seller: volume, revenue, freight and the reviews of the orders they fulfilled.
with items as (
    select
        i.seller_id,
        count(*) as items_sold,
        count(distinct i.order_id) as orders_fulfilled,
        sum(i.price) as item_revenue,
        sum(i.freight_value) as freight_revenue
    from {{ ref('order_items') }} as i
    group by i.seller_id
),

reviews as (
    -- a review counts once per item of its order that the seller fulfilled
    select
        i.seller_id,
        count(*) as reviews_count,
        avg(r.review_score) as avg_review_score
    from {{ ref('order_items') }} as i
    inner join {{ ref('order_reviews') }} as r on r.order_id = i.order_id
    group by i.seller_id
)

select
    s.seller_id,
    s.seller_city,
    s.seller_state,
    coalesce(it.items_sold, 0) as items_sold,
    coalesce(it.orders_fulfilled, 0) as orders_fulfilled,
    coalesce(it.item_revenue, 0) as item_revenue,
    coalesce(it.freight_revenue, 0) as freight_revenue,
    it.freight_revenue / nullif(it.item_revenue, 0) as freight_to_price_ratio,
    coalesce(rv.reviews_count, 0) as reviews_count,
    rv.avg_review_score,
    case when it.items_sold >= 50 then 1 else 0 end as is_high_volume
from {{ ref('sellers') }} as s
left join items as it on it.seller_id = s.seller_id
left join reviews as rv on rv.seller_id = s.seller_id
