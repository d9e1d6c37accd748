{{ dptool.metric_variants('npl_ratio', ['cohort_maturity_threshold', 'npl_denominator']) }}
