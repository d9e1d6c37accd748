{% macro rule__small_segment_suppression(metric, q) %}
  {#- no figure is published for a segment of fewer than 10 distinct accounts: the group (or the whole
      answer, when there is no grouping) is suppressed -#}
  {% do q.having.append('count(distinct account_id) >= 10') %}
  {{ return(q) }}
{% endmacro %}
