{#-
  banking_yymmdd_to_date(column) -> a Berka date (YYMMDD integer, or its text form with a time) as a SQL
  date. Every Berka year is 19YY. Built from dbt's cross-database macros: no DuckDB-only date functions.
-#}
{% macro banking_yymmdd_to_date(column) %}
  {{ return(adapter.dispatch('banking_yymmdd_to_date')(column)) }}
{% endmacro %}

{% macro default__banking_yymmdd_to_date(column) %}
  {%- set text = 'substr(cast(' ~ column ~ ' as ' ~ dbt.type_string() ~ '), 1, 6)' -%}
  {{- 'cast(' ~ dbt.concat(["'19'", 'substr(' ~ text ~ ', 1, 2)', "'-'", 'substr(' ~ text ~ ', 3, 2)', "'-'",
                            'substr(' ~ text ~ ', 5, 2)']) ~ ' as date)' -}}
{% endmacro %}
