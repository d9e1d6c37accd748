{{ dptool.metric_variants('csat', ['csat_neutral_exclusion', 'review_privacy_quarantine']) }}
