{% macro rule__delivery_sla_grace_period(metric, q) %}
  {#- from 2018-01-01 (by purchase date) a delivery one calendar day after the promise is still on time -#}
  {% set allowed_days -%}
    case when order_purchase_timestamp >= {{ dptool.timestamp_literal('2018-01-01') }} then 1 else 0 end
  {%- endset %}
  {% do q.columns.update({'on_time_flag':
      'case when delivery_delay_days <= ' ~ allowed_days ~ ' then 1.0'
      ~ ' when delivery_delay_days is not null then 0.0 end'}) %}
  {{ return(q) }}
{% endmacro %}
