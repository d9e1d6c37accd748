{% macro rule__credit_risk_score_weights(metric, q) %}
  {#- the three components keep their definitions; the equal thirds give way to 50 / 30 / 20 -#}
  {% do q.update({'value':
      "100 * (0.5 * avg(case when status in ('B', 'D') then 1.0 else 0.0 end)"
      ~ " + 0.3 * avg(case when monthly_income < 3 * payments then 1.0 else 0.0 end)"
      ~ " + 0.2 * avg(case when balance_cv > 0.6 then 1.0 else 0.0 end))"}) %}
  {{ return(q) }}
{% endmacro %}
