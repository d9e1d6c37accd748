{% macro rule__account_opening_date(metric, q) %}
  {#- the first 30 calendar days from the account's opening date (day 0 to day 29, the opening deposit
      included) are the onboarding window: its postings leave behavioural statistics -#}
  {% do q.where.append('days_since_opening >= 30') %}
  {{ return(q) }}
{% endmacro %}
