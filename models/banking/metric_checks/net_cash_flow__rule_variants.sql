{{ dptool.metric_variants('net_cash_flow', ['account_opening_date', 'internal_posting_reclassification', 'large_cash_withdrawal_reporting']) }}
