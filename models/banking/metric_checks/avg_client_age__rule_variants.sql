{{ dptool.metric_variants('avg_client_age', ['small_segment_suppression', 'date_conversion', 'minor_client_protection'], group_by=['A2', 'frequency']) }}
