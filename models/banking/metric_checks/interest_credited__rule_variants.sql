{{ dptool.metric_variants('interest_credited', ['account_opening_date', 'small_segment_suppression'], group_by=['A2', 'frequency']) }}
