{{ dptool.metric_variants('seller_fulfillment_score', ['seller_score_weights']) }}
