-- One row per review: +1 for a 5-star review, -1 for a 1- or 2-star review, 0 otherwise.
select
    review_id,
    order_id,
    order_status,
    order_purchase_timestamp,
    customer_state,
    customer_city,
    review_score,
    review_comment_message,
    case when review_score = 5 then 1.0 when review_score <= 2 then -1.0 else 0.0 end as promoter_balance
from {{ ref('int_order_reviews') }}
