{% macro rule__credit_card_installment_cap(metric, q) %}
  {#- credit card payments only: a plan of more than 10 installments counts as 10 -#}
  {% do q.columns.update({'payment_installments':
      "case when payment_type = 'credit_card' and payment_installments > 10 then 10"
      ~ ' else payment_installments end'}) %}
  {{ return(q) }}
{% endmacro %}
