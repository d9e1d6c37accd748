{#- type_double() -> an 8-byte float type: dbt.type_float() is a 4-byte REAL on DuckDB. -#}
{% macro type_double() %}
  {{ return(adapter.dispatch('type_double', 'dptool')()) }}
{% endmacro %}

{% macro default__type_double() %}
  {{- return(dbt.type_float()) -}}
{% endmacro %}

{% macro duckdb__type_double() %}
  {{- return('double') -}}
{% endmacro %}

{% macro spark__type_double() %}
  {#- dbt.type_float() is Spark's 4-byte `float` -#}
  {{- return('double') -}}
{% endmacro %}
