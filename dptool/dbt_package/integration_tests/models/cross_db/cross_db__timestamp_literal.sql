-- the literal is a timestamp at midnight: an order at exactly 2018-01-01 00:00:00 is in, one second
-- before is out
select
    order_id,
    purchased_at >= {{ dptool.timestamp_literal('2018-01-01') }} as purchased_in_2018
from {{ ref('orders') }}
