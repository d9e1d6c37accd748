{{ dptool.metric_variants('category_growth', ['multi_item_attribution'], group_by=['product_category_name_english']) }}
