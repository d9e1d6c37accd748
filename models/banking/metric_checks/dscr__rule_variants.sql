{{ dptool.metric_variants('dscr', ['cohort_maturity_threshold', 'prague_income_haircut', 'dscr_income_basis']) }}
