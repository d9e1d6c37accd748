{% macro rule__card_eligibility_definition(metric, q) %}
  {#- only an account's OWNER may hold a card: disponents leave the penetration denominator -#}
  {% do q.where.append("disposition_type = 'OWNER'") %}
  {{ return(q) }}
{% endmacro %}
