{#- spark_seed_type(type) -> a seed column type as Spark takes it: `varchar`, `char` or `text` without a length is a
    `string` (Spark wants a length for varchar and char, and has no text); any other type as it is. -#}
{% macro spark_seed_type(type) %}
  {%- set bare = (type | string | trim | lower) -%}
  {{ return('string' if bare in ('varchar', 'char', 'text', 'character varying', 'character') else type) }}
{% endmacro %}
