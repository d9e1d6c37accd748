{% macro rule__small_sample_suppression(metric, q) %}
  {#- a figure computed from fewer than 50 records is suppressed: its group is not reported -#}
  {% do q.having.append('count(*) >= 50') %}
  {{ return(q) }}
{% endmacro %}
