{#-
  banking_yymmdd(column) -> a Berka date as the integer YYMMDD (930105), whether the column holds that
  integer already or Berka's text form ('931107 00:00:00' in card.issued). Cross-database: dbt's string
  type and int type, `substr` and `cast` only.
-#}
{% macro banking_yymmdd(column) %}
  {{ return(adapter.dispatch('banking_yymmdd')(column)) }}
{% endmacro %}

{% macro default__banking_yymmdd(column) %}
  {{- 'cast(substr(cast(' ~ column ~ ' as ' ~ dbt.type_string() ~ '), 1, 6) as ' ~ dbt.type_int() ~ ')' -}}
{% endmacro %}
