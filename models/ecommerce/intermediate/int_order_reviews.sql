-- Reviews with the order and customer they belong to.
select
    r.review_id,
    r.order_id,
    r.review_score,
    r.review_comment_message,
    o.order_status,
    o.order_purchase_timestamp,
    c.customer_state,
    c.customer_city
from {{ ref('order_reviews') }} as r
inner join {{ ref('orders') }} as o on o.order_id = r.order_id
inner join {{ ref('customers') }} as c on c.customer_id = o.customer_id
