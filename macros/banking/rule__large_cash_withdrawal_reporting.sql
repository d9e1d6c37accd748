{% macro rule__large_cash_withdrawal_reporting(metric, q) %}
  {#- a cash withdrawal (operation VYBER) of 30,000 CZK or more is reported under the large-cash regime and
      leaves retail transaction statistics; card withdrawals and transfers are not affected -#}
  {% do q.where.append("coalesce(operation, '') <> 'VYBER' or amount < 30000") %}
  {{ return(q) }}
{% endmacro %}
