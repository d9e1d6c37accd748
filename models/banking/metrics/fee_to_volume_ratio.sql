-- A composite (meta.dptool.metric.value: fee_income / transaction_volume): dptool.metric_query computes it
-- per group from its components, each under the rules that govern it; this model is its overall value.
{{ dptool.composite_metric(['fee_income', 'transaction_volume']) }}
