{{ dptool.metric_variants('avg_payment_value', ['undefined_payment_exclusion']) }}
