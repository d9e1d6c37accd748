{% macro rule__review_privacy_quarantine(metric, q) %}
  {#- LGPD: a comment holding an e-mail address is quarantined; reviews without a comment stay -#}
  {% do q.where.append("review_comment_message is null or review_comment_message not like '%@%'") %}
  {{ return(q) }}
{% endmacro %}
