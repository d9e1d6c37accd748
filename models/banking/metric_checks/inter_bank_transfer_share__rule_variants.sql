{{ dptool.metric_variants('inter_bank_transfer_share', ['account_opening_date', 'small_segment_suppression', 'inter_bank_transaction_flag'], group_by=['A2', 'frequency']) }}
