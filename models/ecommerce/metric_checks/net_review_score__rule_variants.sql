{{ dptool.metric_variants('net_review_score', ['review_privacy_quarantine']) }}
