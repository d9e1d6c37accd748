{% macro rule__minor_client_protection(metric, q) %}
  {#- no analytics on minors: a client under 18 on the reference date (birth number decoded, women's month
      less 50) leaves the statistic -#}
  {% do q.where.append(banking_age_years(banking_birth_yymmdd('birth_number'), 'reference_yymmdd') ~ ' >= 18') %}
  {{ return(q) }}
{% endmacro %}
