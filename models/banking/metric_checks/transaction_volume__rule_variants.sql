{{ dptool.metric_variants('transaction_volume', ['account_opening_date', 'internal_posting_reclassification', 'large_cash_withdrawal_reporting']) }}
