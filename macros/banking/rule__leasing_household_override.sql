{% macro rule__leasing_household_override(metric, q) %}
  {#- standing orders characterised LEASING count as household payments, whatever the default formula says -#}
  {% set prev = q.columns.get('household_amount', 'household_amount') %}
  {% do q.columns.update({'household_amount':
      "case when k_symbol = 'LEASING' then amount else (" ~ prev ~ ") end"}) %}
  {{ return(q) }}
{% endmacro %}
