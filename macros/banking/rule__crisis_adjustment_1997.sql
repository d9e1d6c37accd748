{% macro rule__crisis_adjustment_1997(metric, q) %}
  {#- July 1997 floods, north Moravia only: postings from 1 July 1997 to 30 June 1998 (relief payments,
      insurance settlements, missed incomes) leave balance statistics of the region's accounts -#}
  {% do q.where.append("A3 <> 'north Moravia' or date < 970701 or date > 980630") %}
  {{ return(q) }}
{% endmacro %}
