{% macro rule__internal_posting_reclassification(metric, q) %}
  {#- from 1 January 1995 (posting date) the bank's own postings — interest credited, statement fees and
      sanction interest — are not client transactions and leave client activity statistics -#}
  {% do q.where.append("date < 950101 or coalesce(k_symbol, '') not in ('UROK', 'SLUZBY', 'SANKC. UROK')") %}
  {{ return(q) }}
{% endmacro %}
