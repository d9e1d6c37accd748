-- One row per review.
select
    review_id,
    order_id,
    order_status,
    order_purchase_timestamp,
    customer_state,
    customer_city,
    review_score,
    review_comment_message,
    case when review_score <= 2 then 1.0 else 0.0 end as low_review_flag
from {{ ref('int_order_reviews') }}
