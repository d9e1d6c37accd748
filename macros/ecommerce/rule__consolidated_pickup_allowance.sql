{% macro rule__consolidated_pickup_allowance(metric, q) %}
  {#- sellers in SP are collected on the consolidated pickup route: a handoff one calendar day after
      the shipping limit date is still compliant -#}
  {% do q.columns.update({'handoff_on_time_flag':
      "case when handoff_delay_days <= case when seller_state = 'SP' then 1 else 0 end"
      ~ ' then 1.0 else 0.0 end'}) %}
  {{ return(q) }}
{% endmacro %}
