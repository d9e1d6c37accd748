{{ dptool.metric_variants('penalty_interest', ['fee_structure_change_1996']) }}
