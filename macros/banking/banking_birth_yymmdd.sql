{#-
  banking_birth_yymmdd(birth_number) -> the client's date of birth as the integer YYMMDD. Berka's birth
  number is YYMMDD for men and YYMM+50DD for women: a month part above 50 loses 50 (5000 on the integer).
-#}
{% macro banking_birth_yymmdd(birth_number) %}
  {%- set n = banking_birth_number(birth_number) -%}
  {{- '(' ~ n ~ ' - case when mod(cast(floor(' ~ n ~ ' / 100) as ' ~ dbt.type_int() ~ '), 100) > 50 then 5000 else 0 end)' -}}
{% endmacro %}
