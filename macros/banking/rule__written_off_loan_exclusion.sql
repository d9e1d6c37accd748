{% macro rule__written_off_loan_exclusion(metric, q) %}
  {#- a loan that finished unpaid (status B) has been written off: it leaves the loan book's volume figures -#}
  {% do q.where.append("status <> 'B'") %}
  {{ return(q) }}
{% endmacro %}
