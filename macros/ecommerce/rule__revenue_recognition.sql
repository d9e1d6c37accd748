{% macro rule__revenue_recognition(metric, q) %}
  {#- canceled and unavailable orders are never recognized as revenue -#}
  {% do q.where.append("order_status not in ('canceled', 'unavailable')") %}
  {{ return(q) }}
{% endmacro %}
