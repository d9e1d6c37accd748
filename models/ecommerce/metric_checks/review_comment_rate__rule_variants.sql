{{ dptool.metric_variants('review_comment_rate', ['review_privacy_quarantine']) }}
