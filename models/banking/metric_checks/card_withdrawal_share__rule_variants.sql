{{ dptool.metric_variants('card_withdrawal_share', ['account_opening_date', 'small_segment_suppression', 'large_cash_withdrawal_reporting'], group_by=['A2', 'frequency']) }}
