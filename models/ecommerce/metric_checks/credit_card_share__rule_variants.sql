{{ dptool.metric_variants('credit_card_share', ['undefined_payment_exclusion']) }}
