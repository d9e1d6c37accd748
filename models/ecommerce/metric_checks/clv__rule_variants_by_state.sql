{{ dptool.metric_variants('clv', ['small_sample_suppression'], group_by=['customer_state']) }}
