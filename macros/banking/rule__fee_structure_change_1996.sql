{% macro rule__fee_structure_change_1996(metric, q) %}
  {#- from 1 January 1996 (posting date) sanction interest on a negative balance is a penalty fee: it moves
      from interest income to fee income; postings before 1996 keep the old classification -#}
  {% if 'fee_amount' in q.source_columns %}
    {% do q.columns.update({'fee_amount':
        "case when k_symbol = 'SLUZBY' then amount"
        ~ " when k_symbol = 'SANKC. UROK' and date >= 960101 then amount else 0 end"}) %}
  {% endif %}
  {% if 'penalty_interest_amount' in q.source_columns %}
    {% do q.columns.update({'penalty_interest_amount':
        "case when k_symbol = 'SANKC. UROK' and date < 960101 then amount else 0 end"}) %}
  {% endif %}
  {{ return(q) }}
{% endmacro %}
