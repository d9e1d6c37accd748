-- One row per order item, with its seller's rank by lifetime item value (price plus freight).
select
    order_id,
    order_item_id,
    seller_id,
    seller_value_rank,
    order_status,
    order_purchase_timestamp,
    customer_state,
    customer_city,
    seller_state,
    product_category_name_english,
    price,
    freight_value
from {{ ref('int_item_facts') }}
