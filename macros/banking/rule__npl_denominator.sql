{% macro rule__npl_denominator(metric, q) %}
  {#- the NPL ratio is measured on the running loan book (C and D), by outstanding principal: finished
      loans leave numerator and denominator. A composite that contains the NPL share (the Credit Risk Score)
      is computed over the same running book. -#}
  {% do q.where.append("status in ('C', 'D')") %}
  {% if metric == 'npl_ratio' %}
    {% do q.update({'value': "sum(case when status = 'D' then amount else 0 end) / sum(amount)"}) %}
  {% endif %}
  {{ return(q) }}
{% endmacro %}
