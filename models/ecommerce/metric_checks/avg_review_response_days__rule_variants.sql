{{ dptool.metric_variants('avg_review_response_days', ['review_privacy_quarantine']) }}
