{{ dptool.metric_variants('revenue_per_order', ['revenue_recognition']) }}
