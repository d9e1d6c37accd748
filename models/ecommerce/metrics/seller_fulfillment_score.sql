-- One row per order item: a seller is scored on every item it fulfilled.
with items as (
    select
        i.order_id,
        i.order_item_id,
        i.seller_id,
        i.seller_state,
        i.customer_state,
        i.order_status,
        i.order_purchase_timestamp,
        case
            when i.order_status = 'delivered'
                then {{ dptool.days_between('i.order_estimated_delivery_date', 'i.order_delivered_customer_date') }}
        end as delivery_delay_days,
        r.review_score
    from {{ ref('int_order_items') }} as i
    left join {{ ref('order_reviews') }} as r on r.order_id = i.order_id
)

select
    order_id,
    order_item_id,
    seller_id,
    seller_state,
    customer_state,
    order_status,
    order_purchase_timestamp,
    delivery_delay_days,
    case when delivery_delay_days <= 0 then 1.0 when delivery_delay_days > 0 then 0.0 end as on_time_flag,
    review_score,
    case when review_score >= 4 then 1.0 when review_score is not null then 0.0 end as satisfied_flag
from items
