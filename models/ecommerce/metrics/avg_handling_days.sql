-- One row per order handed to the carrier: calendar days from payment approval to the handoff.
select
    order_id,
    order_status,
    order_purchase_timestamp,
    order_approved_at,
    order_delivered_carrier_date,
    customer_state,
    customer_city,
    {{ dptool.days_between('order_approved_at', 'order_delivered_carrier_date') }} as handling_days
from {{ ref('int_orders') }}
where order_approved_at is not null
  and order_delivered_carrier_date is not null
