{{ dptool.metric_variants('loan_penetration_rate', ['small_segment_suppression'], group_by=['A2', 'frequency']) }}
