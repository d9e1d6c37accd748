{% macro rule__junior_card_age_limit(metric, q) %}
  {#- a junior card issued to a holder already 18 on the issue date (birth number decoded, women's month
      less 50) is a classic card for reporting -#}
  {% set prev = q.columns.get('type', 'type') %}
  {% do q.columns.update({'type':
      'case when ' ~ prev ~ " = 'junior' and "
      ~ banking_age_years(banking_birth_yymmdd('birth_number'), 'reference_yymmdd')
      ~ " >= 18 then 'classic' else " ~ prev ~ ' end'}) %}
  {{ return(q) }}
{% endmacro %}
