{#-
  metric_query(metric, rules, where, group_by, shape, k, min_rows, period) -> SQL

  Builds the query spec `q` of a metric from its model's `meta.dptool.metric`, lets each rule macro
  `rule__<id>(metric, q)` change it in order, and renders it (dptool.build_metric_spec). Shapes:
    value   -> one row: value
    grouped -> one row per group: <group_by...>, value
    ranking -> the top k groups: <group_by...>, value, rank
    series  -> one row per period, in order: period, value
    stats   -> per group: <group_by...>, n, mean, variance (of an avg() metric's measure)
  `min_rows` keeps only groups of at least that many rows (a ranking of tiny groups is noise).
  `period` is an expression of a time column (e.g. its month); the `series` shape has one row per period.

  `rules` lists the rules of the metric itself. A composite (meta.dptool.metric.components) is computed
  per group from its components, each under its own rules: pass `rules` as a mapping from each metric of
  the composite (itself included) to its rules, e.g. {'gmv_per_active_seller': [], 'gmv':
  ['revenue_recognition'], 'active_sellers': ['active_seller_definition']}.
-#}
{% macro metric_query(metric, rules=[], where=[], group_by=[], shape='value', k=none, min_rows=none, period=none) %}
  {%- if not execute -%}
    {%- do dptool.ref_metrics(metric, rules) -%}
    {{ return('select 1 as value') }}
  {%- endif -%}
  {%- set having = ['count(*) >= ' ~ (min_rows | int)] if min_rows is not none else [] -%}
  {%- set q = dptool.build_metric_spec(metric, rules, where, group_by, period, having) -%}
  {%- if rules is mapping -%}
    {%- set named = dptool.metric_tree(metric) -%}
    {%- for name in rules if name not in named -%}
      {{ exceptions.raise_compiler_error("dptool: rules name metric '" ~ name ~ "', which is not part of metric '" ~ metric ~ "' (" ~ named | join(', ') ~ ")") }}
    {%- endfor -%}
  {%- endif -%}
  {{ return(dptool.render_metric_query(q, shape, k)) }}
{% endmacro %}

{#- metric_tree(metric) -> the metric and every metric below it through components, each once. -#}
{% macro metric_tree(metric) %}
  {%- set found = [metric] -%}
  {%- for input in dptool.metric_inputs(metric) -%}
    {%- for name in dptool.metric_tree(input.metric) if name not in found -%}{%- do found.append(name) -%}{%- endfor -%}
  {%- endfor -%}
  {{ return(found) }}
{% endmacro %}
