{{ dptool.metric_variants('credit_risk_score', ['credit_risk_score_weights', 'cohort_maturity_threshold', 'npl_denominator', 'prague_income_haircut', 'dscr_income_basis']) }}
