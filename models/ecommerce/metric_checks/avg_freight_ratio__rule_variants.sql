{{ dptool.metric_variants('avg_freight_ratio', ['insured_freight_exclusion']) }}
