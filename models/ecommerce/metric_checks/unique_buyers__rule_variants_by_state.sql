{{ dptool.metric_variants('unique_buyers', ['small_sample_suppression'], group_by=['customer_state']) }}
