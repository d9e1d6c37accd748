{{ dptool.metric_variants('balance_volatility', ['account_opening_date', 'small_segment_suppression', 'crisis_adjustment_1997'], group_by=['A2', 'frequency']) }}
