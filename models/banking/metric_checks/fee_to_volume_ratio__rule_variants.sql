-- depends_on: {{ ref('fee_income') }}
-- depends_on: {{ ref('transaction_volume') }}
{{ dptool.metric_variants('fee_to_volume_ratio', ['account_opening_date']) }}
