-- calendar days, not 24 h spans: 45 minutes across midnight is 1 day, 23 h within a day 0, 71 h across
-- the new year 3; a delivery before its purchase is negative; no delivery is NULL
select
    order_id,
    {{ dptool.days_between('purchased_at', 'delivered_at') }} as days
from {{ ref('orders') }}
