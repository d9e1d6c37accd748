{#-
  gold(metric, rules, where, group_by, shape, k, min_rows) -> the SQL of a task's gold model.

  The base query (no rules) and the rule-modified query side by side, told apart by `variant`
  ('base' | 'gold'). The compiled SQL is the task's provenance; dptool cuts `gold_sql` and
  `base_sql` out of it by their CTE names (dptool_gold, dptool_base).
-#}
{% macro gold(metric, rules=[], where=[], group_by=[], shape='value', k=none, min_rows=none) %}
with dptool_base as (
{{ dptool.metric_query(metric, [], where, group_by, shape, k, min_rows) }}
),
dptool_gold as (
{{ dptool.metric_query(metric, rules, where, group_by, shape, k, min_rows) }}
)
select 'base' as variant, dptool_base.* from dptool_base
union all
select 'gold' as variant, dptool_gold.* from dptool_gold
{% endmacro %}
