{% macro rule__crisis_adjustment_1997(metric, q) %}
  {#- July 1997 floods, north Moravia only, adjustment period 1 July 1997 to 30 June 1998.
      Balance statistics: the region's postings of the period (relief payments, insurance settlements,
      missed incomes) leave them.
      Credit-risk statistics (a loan status column): a region's loan that was running in the period
      (granted on or before 30 June 1998, last instalment due in July 1997 or later; the month number
      YY * 12 + MM of July 1997 is 1171) and is in trouble counts as performing, B as A and D as C. -#}
  {% if 'status' in q.source_columns %}
    {% set prev = q.columns.get('status', 'status') %}
    {% set running = "date <= 980630 and floor(date / 100) - 88 * floor(date / 10000) + duration >= 1171" %}
    {% do q.columns.update({'status':
        "case when A3 = 'north Moravia' and " ~ running ~ " and (" ~ prev ~ ") in ('B', 'D')"
        ~ " then case when (" ~ prev ~ ") = 'B' then 'A' else 'C' end else (" ~ prev ~ ") end"}) %}
  {% else %}
    {% do q.where.append("A3 <> 'north Moravia' or date < 970701 or date > 980630") %}
  {% endif %}
  {{ return(q) }}
{% endmacro %}
