{% macro rule__outlier_exclusion(metric, q) %}
  {#- deliveries over 60 days from purchase are data anomalies and leave the average; measured from
      purchase even where another rule moves the start of the delivery clock -#}
  {% do q.where.append(dptool.days_between('order_purchase_timestamp', 'order_delivered_customer_date') ~ ' <= 60') %}
  {{ return(q) }}
{% endmacro %}
