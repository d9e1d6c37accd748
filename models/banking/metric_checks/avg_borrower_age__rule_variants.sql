{{ dptool.metric_variants('avg_borrower_age', ['date_conversion']) }}
