{% macro rule__seller_score_weights(metric, q) %}
  {#- the Seller Performance Committee's weights replace the catalog's default 0.6 / 0.4 -#}
  {% do q.update({'value': '0.7 * avg(on_time_flag) + 0.3 * avg(satisfied_flag)'}) %}
  {{ return(q) }}
{% endmacro %}
