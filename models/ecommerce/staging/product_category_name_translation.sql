select
    product_category_name,
    product_category_name_english
from {{ ref('olist_product_category_name_translation') }}
