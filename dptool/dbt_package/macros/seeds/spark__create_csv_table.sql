{#-
  spark__create_csv_table(model, agate_table) -> dbt-spark's seed table, with the column types other warehouses
  take: a `varchar` (or `text`) without a length, which Spark refuses, is a Spark `string` (dptool.spark_seed_type).
  Used when the project dispatches dbt's namespace to dptool (README: "Beyond one machine").
-#}
{% macro spark__create_csv_table(model, agate_table) %}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}
  {% set sql %}
    create table {{ this.render() }} (
        {%- for col_name in agate_table.column_names -%}
            {%- set type = dptool.spark_seed_type(column_override.get(col_name, adapter.convert_type(agate_table, loop.index0))) -%}
            {{ adapter.quote_seed_column(col_name | string, quote_seed_column) }} {{ type }} {%- if not loop.last -%}, {%- endif -%}
        {%- endfor -%}
    )
    {{ file_format_clause() }}
    {{ partition_cols(label="partitioned by") }}
    {{ clustered_cols(label="clustered by") }}
    {{ location_clause() }}
    {{ comment_clause() }}
  {% endset %}
  {% call statement('_') -%}
    {{ sql }}
  {%- endcall %}
  {{ return(sql) }}
{% endmacro %}
