-- One row per order item, with the category that leads its order: a category-basket metric, sliced by
-- category, order status and purchase time.
select
    order_id,
    order_item_id,
    order_status,
    order_purchase_timestamp,
    product_category_name_english,
    lead_product_category,
    items_in_order
from {{ ref('int_item_facts') }}
