{{ dptool.metric_variants('inter_bank_volume', ['inter_bank_transaction_flag']) }}
