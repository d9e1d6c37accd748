{% macro rule__csat_neutral_exclusion(metric, q) %}
  {#- a 3-star review is neither satisfied nor unsatisfied: it leaves the denominator (NULL is skipped by avg) -#}
  {% do q.columns.update({'satisfied_flag':
      'case when review_score >= 4 then 1.0 when review_score <= 2 then 0.0 end'}) %}
  {{ return(q) }}
{% endmacro %}
