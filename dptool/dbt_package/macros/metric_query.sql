{#-
  metric_query(metric, rules, where, group_by, shape, k, min_rows, period) -> SQL

  Builds the query spec `q` of a metric from its model's `meta.dptool.metric`, lets each rule macro
  `rule__<id>(metric, q)` change it in order, and renders it. Shapes:
    value   -> one row: value
    grouped -> one row per group: <group_by...>, value
    ranking -> the top k groups: <group_by...>, value, rank
    series  -> one row per period, in order: period, value
    stats   -> per group: <group_by...>, n, mean, variance (of an avg() metric's measure)
  `min_rows` keeps only groups of at least that many rows (a ranking of tiny groups is noise).
  `period` is an expression of a time column (e.g. its month); the `series` shape has one row per period.
-#}
{% macro metric_query(metric, rules=[], where=[], group_by=[], shape='value', k=none, min_rows=none, period=none) %}
  {%- set relation = ref(metric) -%}
  {%- if not execute -%}
    {{ return('select 1 as value') }}
  {%- endif -%}
  {%- set q = dptool.metric_spec(metric, relation) -%}
  {%- do q.where.extend(where) -%}
  {%- do q.group_by.extend(group_by) -%}
  {%- do q.update({'period': period}) -%}
  {%- if min_rows is not none -%}
    {%- do q.having.append('count(*) >= ' ~ (min_rows | int)) -%}
  {%- endif -%}
  {#- a namespace, because a plain `set` inside a for loop does not outlive the loop -#}
  {%- set state = namespace(q=q) -%}
  {%- for rule_id in rules -%}
    {%- set rule_macro = context.get('rule__' ~ rule_id) -%}
    {%- if rule_macro is none -%}
      {{ exceptions.raise_compiler_error("dptool: rule macro 'rule__" ~ rule_id ~ "' not found (used by metric '" ~ metric ~ "')") }}
    {%- endif -%}
    {%- set changed = rule_macro(metric, state.q) -%}
    {%- if changed is mapping -%}{%- set state.q = changed -%}{%- endif -%}
  {%- endfor -%}
  {{ return(dptool.render_metric_query(state.q, shape, k)) }}
{% endmacro %}
