{{ dptool.metric_variants('household_payment_share', ['standing_order_amount_validation', 'leasing_household_override']) }}
