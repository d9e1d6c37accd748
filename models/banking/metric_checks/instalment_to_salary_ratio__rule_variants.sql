{{ dptool.metric_variants('instalment_to_salary_ratio', ['prague_income_haircut', 'written_off_loan_exclusion']) }}
