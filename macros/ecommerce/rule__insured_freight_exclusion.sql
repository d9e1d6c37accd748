{% macro rule__insured_freight_exclusion(metric, q) %}
  {#- watches_gifts only: freight is an insured-courier charge collected for the carrier, not marketplace value;
      on top of any other redefinition of freight (CLV's lifespan window) -#}
  {% set prev = q.columns.get('freight_value', 'freight_value') %}
  {% do q.columns.update({'freight_value':
      "case when product_category_name_english = 'watches_gifts' then 0 else (" ~ prev ~ ") end"}) %}
  {{ return(q) }}
{% endmacro %}
