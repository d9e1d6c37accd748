{{ dptool.metric_variants('cross_sell_index', ['standing_order_amount_validation']) }}
