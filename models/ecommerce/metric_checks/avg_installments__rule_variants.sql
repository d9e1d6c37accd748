{{ dptool.metric_variants('avg_installments', ['undefined_payment_exclusion']) }}
