-- One row per order: an order is defective when it was canceled, delivered late or reviewed with 1-2 stars.
with orders as (
    select
        o.order_id,
        o.order_status,
        o.order_purchase_timestamp,
        o.customer_state,
        o.customer_city,
        case
            when o.order_status = 'delivered' and o.order_delivered_customer_date is not null
                then {{ dptool.days_between('o.order_estimated_delivery_date', 'o.order_delivered_customer_date') }}
        end as delivery_delay_days,
        r.review_score
    from {{ ref('int_orders') }} as o
    left join {{ ref('order_reviews') }} as r on r.order_id = o.order_id
)

select
    order_id,
    order_status,
    order_purchase_timestamp,
    customer_state,
    customer_city,
    review_score,
    delivery_delay_days,
    case when order_status = 'canceled' then 1.0 else 0.0 end as canceled_flag,
    case when delivery_delay_days > 0 then 1.0 else 0.0 end as late_flag,
    case when review_score <= 2 then 1.0 else 0.0 end as low_review_flag
from orders
