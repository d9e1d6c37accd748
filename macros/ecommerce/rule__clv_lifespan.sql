{% macro rule__clv_lifespan(metric, q) %}
  {#- only purchases within 365 days of the person's first order add to lifetime value; later orders
      add nothing, while the buyer still counts -#}
  {% do q.columns.update({'order_value':
      'case when days_since_first_purchase <= 365 then order_value else 0 end'}) %}
  {{ return(q) }}
{% endmacro %}
