{#- round_double(expr, precision) -> expr as an 8-byte float rounded to `precision` digits.
    PostgreSQL (and Redshift) round only numerics with a precision argument. -#}
{% macro round_double(expr, precision) %}
  {{ return(adapter.dispatch('round_double', 'dptool')(expr, precision)) }}
{% endmacro %}

{% macro default__round_double(expr, precision) %}
  {{- 'round(cast(' ~ expr ~ ' as ' ~ dptool.type_double() ~ '), ' ~ precision ~ ')' -}}
{% endmacro %}

{% macro postgres__round_double(expr, precision) %}
  {{- 'cast(round(cast(' ~ expr ~ ' as numeric), ' ~ precision ~ ') as double precision)' -}}
{% endmacro %}
