-- depends_on: {{ ref('gmv') }}
-- depends_on: {{ ref('unique_buyers') }}
{{ dptool.metric_variants('clv', ['clv_lifespan']) }}
