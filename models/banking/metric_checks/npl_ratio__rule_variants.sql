{{ dptool.metric_variants('npl_ratio', ['cohort_maturity_threshold', 'npl_denominator', 'crisis_adjustment_1997']) }}
