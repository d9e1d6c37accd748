-- A composite (meta.dptool.metric.value: 0.6 * on_time_delivery_rate + 0.4 * csat): dptool.metric_query computes
-- it per group from its components, each under the rules that govern it; this model is its overall value.
{{ dptool.composite_metric(['on_time_delivery_rate', 'csat']) }}
