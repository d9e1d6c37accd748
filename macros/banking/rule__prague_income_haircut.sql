{% macro rule__prague_income_haircut(metric, q) %}
  {#- Prague branches only: every income figure used to judge affordability counts at 80 % (a 20 %
      cost-of-living deduction) -#}
  {% for col in ['monthly_income', 'monthly_noncash_income', 'reference_salary'] if col in q.source_columns %}
    {% set prev = q.columns.get(col, col) %}
    {% do q.columns.update({col: "case when A3 = 'Prague' then 0.8 * (" ~ prev ~ ") else (" ~ prev ~ ") end"}) %}
  {% endfor %}
  {{ return(q) }}
{% endmacro %}
