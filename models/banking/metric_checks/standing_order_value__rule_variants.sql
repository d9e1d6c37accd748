{{ dptool.metric_variants('standing_order_value', ['small_segment_suppression', 'standing_order_amount_validation'], group_by=['A2', 'frequency']) }}
