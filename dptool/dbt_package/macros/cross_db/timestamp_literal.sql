{#- timestamp_literal('2018-01-01') -> a timestamp constant in the target's SQL. -#}
{% macro timestamp_literal(value) %}
  {{ return(adapter.dispatch('timestamp_literal', 'dptool')(value)) }}
{% endmacro %}

{% macro default__timestamp_literal(value) %}
  {{- "cast('" ~ (value | replace("'", "''")) ~ "' as " ~ dbt.type_timestamp() ~ ")" -}}
{% endmacro %}

{% macro spark__timestamp_literal(value) %}
  {#- Spark reads '' as two adjacent literals ('d''Oeste' is 'dOeste') and a backslash as an escape -#}
  {{- "cast('" ~ (value | replace("\\", "\\\\") | replace("'", "\\'")) ~ "' as " ~ dbt.type_timestamp() ~ ")" -}}
{% endmacro %}
