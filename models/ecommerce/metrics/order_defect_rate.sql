-- A composite (meta.dptool.metric.value: cancellation_rate + late_delivery_rate + low_review_rate):
-- dptool.metric_query computes it per group from its components, each under the rules that govern it;
-- this model is its overall value.
{{ dptool.composite_metric(['cancellation_rate', 'late_delivery_rate', 'low_review_rate']) }}
