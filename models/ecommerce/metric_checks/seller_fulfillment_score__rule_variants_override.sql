-- depends_on: {{ ref('on_time_delivery_rate') }}
-- depends_on: {{ ref('csat') }}
{{ dptool.metric_variants('seller_fulfillment_score', ['seller_score_weights']) }}
