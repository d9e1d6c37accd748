{{ dptool.metric_variants('gmv', ['revenue_recognition']) }}
