{{ dptool.metric_variants('category_growth', ['insured_freight_exclusion']) }}
