{% macro rule__insured_freight_exclusion(metric, q) %}
  {#- watches_gifts only: freight is an insured-courier charge collected for the carrier, not marketplace value -#}
  {% do q.columns.update({'freight_value':
      "case when product_category_name_english = 'watches_gifts' then 0 else freight_value end"}) %}
  {{ return(q) }}
{% endmacro %}
