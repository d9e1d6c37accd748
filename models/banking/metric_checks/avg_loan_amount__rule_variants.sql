{{ dptool.metric_variants('avg_loan_amount', ['written_off_loan_exclusion']) }}
