{% macro rule__undefined_payment_exclusion(metric, q) %}
  {#- "not_defined" is an abandoned checkout's placeholder, not a payment method -#}
  {% do q.where.append("payment_type <> 'not_defined'") %}
  {{ return(q) }}
{% endmacro %}
