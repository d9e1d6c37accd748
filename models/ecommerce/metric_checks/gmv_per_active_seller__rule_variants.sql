{{ dptool.metric_variants('gmv_per_active_seller', ['active_seller_definition', 'insured_freight_exclusion']) }}
