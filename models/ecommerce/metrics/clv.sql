-- A composite (meta.dptool.metric.value: gmv / unique_buyers): dptool.metric_query computes it per group
-- from its components, each under the rules that govern it; this model is its overall value.
{{ dptool.composite_metric(['gmv', 'unique_buyers']) }}
