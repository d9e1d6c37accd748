{% macro rule__customer_deduplication(metric, q) %}
  {#- a buyer is the person, not the customer record that checkout creates for every order -#}
  {% do q.columns.update({'buyer_id': 'customer_unique_id'}) %}
  {{ return(q) }}
{% endmacro %}
