{{ dptool.metric_variants('repeat_purchase_rate', ['small_sample_suppression'], group_by=['customer_state']) }}
