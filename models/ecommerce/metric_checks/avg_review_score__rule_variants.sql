{{ dptool.metric_variants('avg_review_score', ['review_privacy_quarantine']) }}
