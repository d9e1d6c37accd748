{{ dptool.metric_variants('revenue_per_order', ['insured_freight_exclusion']) }}
