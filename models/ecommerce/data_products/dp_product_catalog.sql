-- One row per product: its English category, size and weight, and how well it is presented.
select
    p.product_id,
    t.product_category_name_english as category,
    p.product_weight_g,
    p.product_photos_qty,
    p.product_length_cm * p.product_height_cm * p.product_width_cm as volume_cm3,
    case when p.product_weight_g >= 5000 then 1 else 0 end as is_heavy,
    case when p.product_photos_qty >= 3 then 1 else 0 end as has_photo_gallery
from {{ ref('products') }} as p
left join {{ ref('product_category_name_translation') }} as t
    on t.product_category_name = p.product_category_name
