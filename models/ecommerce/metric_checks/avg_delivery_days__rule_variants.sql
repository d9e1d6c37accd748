{{ dptool.metric_variants('avg_delivery_days', ['outlier_exclusion', 'sao_paulo_approval_clock']) }}
