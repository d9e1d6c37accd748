{#- is_numeric_column(col) -> whether an adapter Column holds numbers, DECIMAL(p, s) included. -#}
{% macro is_numeric_column(col) %}
  {%- set data_type = (col.data_type or '') | lower -%}
  {{ return(col.is_number() or col.is_float() or data_type.startswith('decimal') or data_type.startswith('numeric')) }}
{% endmacro %}
