{#- days_between(start_ts, end_ts) -> whole calendar days from start to end (dates, not 24 h spans). -#}
{% macro days_between(start_ts, end_ts) %}
  {{ return(adapter.dispatch('days_between', 'dptool')(start_ts, end_ts)) }}
{% endmacro %}

{% macro default__days_between(start_ts, end_ts) %}
  {{- dbt.datediff('cast(' ~ start_ts ~ ' as date)', 'cast(' ~ end_ts ~ ' as date)', 'day') -}}
{% endmacro %}

{% macro spark__days_between(start_ts, end_ts) %}
  {#- dbt-spark's datediff wraps each side in assert_true(...), which has no DuckDB counterpart for a gold_sql -#}
  {{- 'datediff(cast(' ~ end_ts ~ ' as date), cast(' ~ start_ts ~ ' as date))' -}}
{% endmacro %}
