{% macro rule__clv_lifespan(metric, q) %}
  {#- CLV = GMV / buyers: only purchases within 365 days of the person's first order add value (their item
      price and freight); later orders add nothing, while the buyer still counts -#}
  {% for col in ['price', 'freight_value'] %}
    {% set prev = q.columns.get(col, col) %}
    {% do q.columns.update({col: 'case when days_since_first_purchase <= 365 then (' ~ prev ~ ') else 0 end'}) %}
  {% endfor %}
  {{ return(q) }}
{% endmacro %}
