-- One row per review: the score, whether it was positive or written, how fast it was answered, and
-- whether the reviewed order had arrived late.
select
    r.review_id,
    r.order_id,
    r.review_score,
    case when r.review_score >= 4 then 1 else 0 end as is_satisfied,
    case when r.review_comment_message is not null then 1 else 0 end as has_comment,
    {{ dptool.days_between('r.review_creation_date', 'r.review_answer_timestamp') }} as answer_days,
    o.order_purchase_timestamp,
    c.customer_state,
    c.customer_city,
    case
        when {{ dptool.days_between('o.order_estimated_delivery_date', 'o.order_delivered_customer_date') }} > 0
        then 1 else 0
    end as was_delivered_late
from {{ ref('order_reviews') }} as r
inner join {{ ref('orders') }} as o on o.order_id = r.order_id
inner join {{ ref('customers') }} as c on c.customer_id = o.customer_id
