{% macro rule__dscr_income_basis(metric, q) %}
  {#- for loans granted from 1 January 1997 the income that services debt excludes cash deposits -#}
  {% set income = q.columns.get('monthly_income', 'monthly_income') %}
  {% set noncash = q.columns.get('monthly_noncash_income', 'monthly_noncash_income') %}
  {% do q.columns.update({'monthly_income':
      'case when date >= 970101 then (' ~ noncash ~ ') else (' ~ income ~ ') end'}) %}
  {{ return(q) }}
{% endmacro %}
