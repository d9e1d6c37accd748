{{ dptool.metric_variants('loan_default_rate', ['crisis_adjustment_1997']) }}
