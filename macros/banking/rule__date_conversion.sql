{% macro rule__date_conversion(metric, q) %}
  {#- a woman's birth number carries her birth month plus 50: take 50 off before reading it as a date -#}
  {% do q.columns.update({'age_years':
      banking_age_years(banking_birth_yymmdd('birth_number'), 'reference_yymmdd')}) %}
  {{ return(q) }}
{% endmacro %}
