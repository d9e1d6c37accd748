{#-
  metric_variants(metric, rules, group_by) -> the metric's overall value (per group when `group_by` is
  given) without rules (variant 'base') and under each rule on its own (variant = the rule id). Paired
  with the test rule_changes_answer, it proves every declared rule -> metric link at catalog level; a
  rule that only acts per group (small-sample suppression) is proven with a group_by.
-#}
{% macro metric_variants(metric, rules, group_by=[]) %}
{%- set shape = 'grouped' if group_by else 'value' -%}
with dptool_base as (
{{ dptool.metric_query(metric, [], [], group_by, shape) }}
)
{%- for rule_id in rules %},
dptool_rule_{{ loop.index }} as (
{{ dptool.metric_query(metric, [rule_id], [], group_by, shape) }}
)
{%- endfor %}
select 'base' as variant, dptool_base.* from dptool_base
{%- for rule_id in rules %}
union all
select '{{ rule_id }}' as variant, dptool_rule_{{ loop.index }}.* from dptool_rule_{{ loop.index }}
{%- endfor %}
{% endmacro %}
