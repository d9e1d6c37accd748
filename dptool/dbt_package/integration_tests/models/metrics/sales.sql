select
    order_id,
    region,
    city,
    channel,
    status,
    amount,
    purchased_at,
    delivered_at
from {{ ref('orders') }}
