{% macro rule__pending_order_exclusion(metric, q) %}
  {#- orders not yet shipped have no outcome yet: they leave the order-outcome rates -#}
  {% do q.where.append("order_status not in ('created', 'approved', 'processing', 'invoiced')") %}
  {{ return(q) }}
{% endmacro %}
