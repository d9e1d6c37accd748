{{ dptool.metric_variants('loan_volume', ['written_off_loan_exclusion']) }}
