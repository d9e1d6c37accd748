-- A composite (meta.dptool.metric.value: card_penetration_rate + loan_penetration_rate + standing_order_coverage):
-- dptool.metric_query computes it per group from its components, each under the rules that govern it; this
-- model is its overall value.
{{ dptool.composite_metric(['card_penetration_rate', 'loan_penetration_rate', 'standing_order_coverage']) }}
