-- One row per order item handed to the carrier: calendar days from the shipping limit to the handoff.
with items as (
    select
        order_id,
        order_item_id,
        seller_id,
        order_status,
        order_purchase_timestamp,
        customer_state,
        customer_city,
        seller_state,
        product_category_name_english,
        shipping_limit_date,
        order_delivered_carrier_date,
        {{ dptool.days_between('shipping_limit_date', 'order_delivered_carrier_date') }} as handoff_delay_days
    from {{ ref('int_item_facts') }}
    where order_delivered_carrier_date is not null
)

select
    *,
    case when handoff_delay_days <= 0 then 1.0 else 0.0 end as handoff_on_time_flag
from items
