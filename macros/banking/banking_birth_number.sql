{#- banking_birth_number(column) -> the birth number as an integer (the table may hold it as text, as an
    identifier): YYMMDD, with 50 added to the month for women. -#}
{% macro banking_birth_number(column) %}
  {{- 'cast(' ~ column ~ ' as ' ~ dbt.type_int() ~ ')' -}}
{% endmacro %}
