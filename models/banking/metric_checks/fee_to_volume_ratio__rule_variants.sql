{{ dptool.metric_variants('fee_to_volume_ratio', ['account_opening_date', 'fee_structure_change_1996']) }}
