{% macro rule__multi_item_attribution(metric, q) %}
  {#- every item of an order is reported under the order's lead category: the category of its
      highest-priced item (the lowest item number on a tie) -#}
  {% do q.columns.update({'product_category_name_english': 'lead_product_category'}) %}
  {{ return(q) }}
{% endmacro %}
