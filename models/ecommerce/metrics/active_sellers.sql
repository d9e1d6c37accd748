-- One row per order item; active_seller_id is the seller the catalog counts as active: any seller with an item.
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
    seller_avg_review_score
from {{ ref('int_seller_items') }}
