{% macro rule__cohort_maturity_threshold(metric, q) %}
  {#- a loan enters risk statistics only once it is seasoned: granted on or before 31 December 1997, at
      least 12 months before the reporting cut-off of 31 December 1998 -#}
  {% do q.where.append('date <= 971231') %}
  {{ return(q) }}
{% endmacro %}
