select
    review_id,
    order_id,
    order_status,
    order_purchase_timestamp,
    customer_state,
    customer_city,
    review_score,
    review_comment_message
from {{ ref('int_order_reviews') }}
