{#-
  metric_variants(metric, rules) -> the metric's overall value without rules (variant 'base') and
  under each rule on its own (variant = the rule id). Paired with the test rule_changes_answer, it
  proves every declared rule -> metric link at catalog level.
-#}
{% macro metric_variants(metric, rules) %}
with dptool_base as (
{{ dptool.metric_query(metric) }}
)
{%- for rule_id in rules %},
dptool_rule_{{ loop.index }} as (
{{ dptool.metric_query(metric, [rule_id]) }}
)
{%- endfor %}
select 'base' as variant, dptool_base.* from dptool_base
{%- for rule_id in rules %}
union all
select '{{ rule_id }}' as variant, dptool_rule_{{ loop.index }}.* from dptool_rule_{{ loop.index }}
{%- endfor %}
{% endmacro %}
