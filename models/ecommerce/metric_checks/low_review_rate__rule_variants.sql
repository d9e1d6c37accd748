{{ dptool.metric_variants('low_review_rate', ['review_privacy_quarantine']) }}
