{{ dptool.metric_variants('net_review_score', ['small_sample_suppression'], group_by=['customer_state']) }}
