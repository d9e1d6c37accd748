{#- is_numeric_column(col) -> whether an adapter Column holds numbers, DECIMAL(p, s) included. -#}
{% macro is_numeric_column(col) %}
  {{ return(adapter.dispatch('is_numeric_column', 'dptool')(col)) }}
{% endmacro %}

{% macro default__is_numeric_column(col) %}
  {%- set data_type = (col.data_type or '') | lower -%}
  {{ return(col.is_number() or col.is_float() or data_type.startswith('decimal') or data_type.startswith('numeric')) }}
{% endmacro %}

{% macro spark__is_numeric_column(col) %}
  {#- dbt's Column knows neither of Spark's `int` and `tinyint` as a number -#}
  {%- set data_type = (col.data_type or '') | lower -%}
  {{ return(dptool.default__is_numeric_column(col) or data_type in ('int', 'tinyint')) }}
{% endmacro %}
