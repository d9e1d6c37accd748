-- One row per answered review: calendar days from the survey being sent to the customer's answer.
select
    r.review_id,
    r.order_id,
    o.order_status,
    o.order_purchase_timestamp,
    o.customer_state,
    o.customer_city,
    r.review_score,
    r.review_comment_message,
    r.review_creation_date,
    r.review_answer_timestamp,
    {{ dptool.days_between('r.review_creation_date', 'r.review_answer_timestamp') }} as response_days
from {{ ref('order_reviews') }} as r
inner join {{ ref('int_orders') }} as o on o.order_id = r.order_id
where r.review_answer_timestamp is not null
