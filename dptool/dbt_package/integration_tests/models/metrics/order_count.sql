select
    order_id,
    region,
    city,
    channel,
    status,
    purchased_at
from {{ ref('orders') }}
