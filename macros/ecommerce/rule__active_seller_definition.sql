{% macro rule__active_seller_definition(metric, q) %}
  {#- active = an item of a delivered order in the period (volume) and an average review score of at
      least 3.0 across all reviews on record (quality); a seller not yet reviewed meets the quality test -#}
  {% do q.columns.update({'active_seller_id':
      "case when order_status = 'delivered'"
      ~ ' and (seller_avg_review_score is null or seller_avg_review_score >= 3.0)'
      ~ ' then seller_id end'}) %}
  {{ return(q) }}
{% endmacro %}
