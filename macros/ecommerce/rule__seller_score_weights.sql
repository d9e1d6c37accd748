{% macro rule__seller_score_weights(metric, q) %}
  {#- the Seller Performance Committee's weights replace the catalog's default 0.6 / 0.4 of the two components -#}
  {% do q.update({'value': '0.7 * on_time_delivery_rate + 0.3 * csat'}) %}
  {{ return(q) }}
{% endmacro %}
