{% macro rule__inter_bank_transaction_flag(metric, q) %}
  {#- transfers with the group's own institutions (clearing codes QR and ST) are intra-group, not inter-bank -#}
  {% do q.columns.update({'inter_bank_flag':
      "case when bank is not null and trim(bank) <> '' and bank not in ('QR', 'ST') then 1.0 else 0.0 end"}) %}
  {{ return(q) }}
{% endmacro %}
