{{ dptool.metric_variants('seller_fulfillment_score', ['delivery_sla_grace_period', 'csat_neutral_exclusion']) }}
