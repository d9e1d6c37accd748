{#-
  quote_column(metric, name) -> a column of a metric's rows as SQL: quote_columns of the one name.
-#}
{% macro quote_column(metric, name) %}
  {{ return(dptool.quote_columns(metric, [name])[0]) }}
{% endmacro %}
