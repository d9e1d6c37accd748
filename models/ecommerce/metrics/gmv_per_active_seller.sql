-- One row per order item: its value, and the seller who counts as active for it.
select
    order_id,
    order_item_id,
    seller_id,
    seller_id as active_seller_id,
    order_status,
    order_purchase_timestamp,
    customer_state,
    customer_city,
    seller_state,
    product_category_name_english,
    seller_avg_review_score,
    price,
    freight_value
from {{ ref('int_seller_items') }}
