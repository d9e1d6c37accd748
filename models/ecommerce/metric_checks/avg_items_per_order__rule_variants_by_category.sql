{{ dptool.metric_variants('avg_items_per_order', ['multi_item_attribution'], group_by=['product_category_name_english']) }}
