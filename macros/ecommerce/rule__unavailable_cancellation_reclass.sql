{% macro rule__unavailable_cancellation_reclass(metric, q) %}
  {#- from 2018-01-01 (by purchase date) an order closed as unavailable counts as a cancellation -#}
  {% do q.columns.update({'canceled_flag':
      "case when order_status = 'canceled' then 1.0"
      ~ " when order_status = 'unavailable' and order_purchase_timestamp >= "
      ~ dptool.timestamp_literal('2018-01-01') ~ ' then 1.0 else 0.0 end'}) %}
  {{ return(q) }}
{% endmacro %}
