{{ dptool.metric_variants('standing_order_coverage', ['standing_order_amount_validation']) }}
