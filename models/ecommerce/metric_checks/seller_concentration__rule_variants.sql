{{ dptool.metric_variants('seller_concentration', ['insured_freight_exclusion']) }}
