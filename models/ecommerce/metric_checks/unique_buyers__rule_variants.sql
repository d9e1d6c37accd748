{{ dptool.metric_variants('unique_buyers', ['customer_deduplication']) }}
