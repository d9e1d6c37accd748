{{ dptool.metric_variants('avg_monthly_instalment', ['written_off_loan_exclusion']) }}
