{#-
  gold(metric, rules, where, group_by, shape, k, min_rows, period, base_rules) -> a task's gold model.

  The base query (`base_rules`: none, except for a counterfactual, whose base applies every rule) and
  the rule-modified query side by side, told apart by `variant` ('base' | 'gold'); a counterfactual adds the
  query under no rule ('rule_free': what an answer that ignores every rule gives). The compiled SQL is
  the task's provenance; dptool cuts `gold_sql` and `base_sql` out of it by their CTE names
  (dptool_gold, dptool_base).
  `rules` and `base_rules` are what dptool.metric_query takes: a list, or for a composite a mapping from each
  metric it is made of to that metric's rules.
-#}
{% macro gold(metric, rules=[], where=[], group_by=[], shape='value', k=none, min_rows=none, period=none,
              base_rules=[]) %}
with dptool_base as (
{{ dptool.metric_query(metric, base_rules, where, group_by, shape, k, min_rows, period) }}
),
dptool_gold as (
{{ dptool.metric_query(metric, rules, where, group_by, shape, k, min_rows, period) }}
){% if base_rules %},
dptool_rule_free as (
{{ dptool.metric_query(metric, [], where, group_by, shape, k, min_rows, period) }}
){% endif %}
select 'base' as variant, dptool_base.* from dptool_base
union all
select 'gold' as variant, dptool_gold.* from dptool_gold
{%- if base_rules %}
union all
select 'rule_free' as variant, dptool_rule_free.* from dptool_rule_free
{%- endif %}
{% endmacro %}
