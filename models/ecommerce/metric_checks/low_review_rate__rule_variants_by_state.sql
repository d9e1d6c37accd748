{{ dptool.metric_variants('low_review_rate', ['small_sample_suppression'], group_by=['customer_state']) }}
