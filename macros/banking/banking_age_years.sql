{#-
  banking_age_years(birth_yymmdd, reference_yymmdd) -> whole years of age on the reference date, both
  given as YYMMDD integers of the same century: the difference of the two numbers over 10000, rounded
  down, is the number of birthdays passed (month and day break the tie).
-#}
{% macro banking_age_years(birth_yymmdd, reference_yymmdd) %}
  {{- 'floor((' ~ reference_yymmdd ~ ' - ' ~ birth_yymmdd ~ ') / 10000.0)' -}}
{% endmacro %}
