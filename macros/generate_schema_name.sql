{#- Custom schemas are used as given (ecommerce, dptool_gold), not prefixed with the target schema:
    the agent-visible tables then keep short, stable names in every target. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}{{ target.schema }}{%- else -%}{{ custom_schema_name | trim }}{%- endif -%}
{%- endmacro %}
