{% macro rule__sao_paulo_approval_clock(metric, q) %}
  {#- SP customers (same-state express programme, from 2017-03-01): the clock starts at payment approval -#}
  {% set from_approval = dptool.days_between(
      'coalesce(order_approved_at, order_purchase_timestamp)', 'order_delivered_customer_date') %}
  {% do q.columns.update({'delivery_days':
      "case when customer_state = 'SP' and order_purchase_timestamp >= "
      ~ dptool.timestamp_literal('2017-03-01')
      ~ ' then ' ~ from_approval ~ ' else delivery_days end'}) %}
  {{ return(q) }}
{% endmacro %}
