-- a rule appends `channel is null or channel <> 'internal'` after the caller's own `or` predicate:
-- parenthesized, the answer is 210; unparenthesized it would be 700 (or 660), see
-- tests/assert_or_predicate_needs_parentheses.sql
{{ dptool.metric_query('sales', rules=['exclude_internal'], where=["region = 'north' or region = 'west'"]) }}
