{% macro rule__standing_order_amount_validation(metric, q) %}
  {#- a standing order below 100 CZK is an unvalidated placeholder: it leaves order statistics, and an account
      whose orders are all below 100 CZK has no standing order -#}
  {% if 'max_order_amount' in q.source_columns %}
    {% do q.columns.update({'has_standing_order':
        'case when max_order_amount >= 100 then 1.0 else 0.0 end'}) %}
  {% else %}
    {% do q.where.append('amount >= 100') %}
  {% endif %}
  {{ return(q) }}
{% endmacro %}
