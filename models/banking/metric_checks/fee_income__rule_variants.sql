{{ dptool.metric_variants('fee_income', ['small_segment_suppression', 'fee_structure_change_1996'], group_by=['A2', 'frequency']) }}
