-- depends_on: {{ ref('cancellation_rate') }}
-- depends_on: {{ ref('late_delivery_rate') }}
-- depends_on: {{ ref('low_review_rate') }}
{{ dptool.metric_variants('order_defect_rate', ['pending_order_exclusion']) }}
