{{ dptool.metric_variants('active_sellers', ['active_seller_definition']) }}
