{{ dptool.metric_variants('shipping_limit_compliance', ['consolidated_pickup_allowance']) }}
