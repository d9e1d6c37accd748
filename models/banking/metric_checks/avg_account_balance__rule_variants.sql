{{ dptool.metric_variants('avg_account_balance', ['account_opening_date', 'small_segment_suppression', 'crisis_adjustment_1997'], group_by=['A2', 'frequency']) }}
