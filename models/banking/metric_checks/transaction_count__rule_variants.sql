{{ dptool.metric_variants('transaction_count', ['account_opening_date', 'internal_posting_reclassification', 'large_cash_withdrawal_reporting']) }}
