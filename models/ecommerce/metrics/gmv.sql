select
    order_id,
    order_item_id,
    order_status,
    order_purchase_timestamp,
    customer_state,
    customer_city,
    seller_state,
    product_category_name_english,
    price,
    freight_value,
    days_since_first_purchase
from {{ ref('int_order_items') }}
