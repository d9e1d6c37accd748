{{ dptool.metric_variants('gmv', ['insured_freight_exclusion']) }}
