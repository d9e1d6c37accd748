{#-
  spark__load_csv_rows(model, agate_table) -> a seed's rows inserted as SQL literals, each cast to its column's type.

  dbt-spark binds seed values by formatting them into the SQL unescaped: with the `session` method a NULL becomes
  the text 'None' and a quote ends the string early (dbt-labs/dbt-adapters#487). Here a NULL is `null` and a text is
  a Spark string literal, its backslashes and quotes escaped. Used when the project dispatches dbt's namespace to
  dptool (README: "Beyond one machine").
-#}
{% macro spark__load_csv_rows(model, agate_table) %}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set types = [] -%}
  {%- for col_name in agate_table.column_names -%}
    {%- do types.append(dptool.spark_seed_type(column_override.get(col_name, adapter.convert_type(agate_table, loop.index0)))) -%}
  {%- endfor -%}
  {%- set statements = [] -%}
  {%- for chunk in agate_table.rows | batch(get_batch_size()) -%}
    {%- set sql -%}
      insert into {{ this.render() }} values
      {% for row in chunk -%}
        ({%- for value in row -%}
          {%- if value is none -%}null{%- else -%}
            cast('{{ value | string | replace("\\", "\\\\") | replace("'", "\\'") }}' as {{ types[loop.index0] }})
          {%- endif -%}{{ ", " if not loop.last }}
        {%- endfor -%}){{ "," if not loop.last }}
      {% endfor %}
    {%- endset -%}
    {%- do adapter.add_query(sql, abridge_sql_log=True) -%}
    {%- if loop.first -%}{%- do statements.append(sql) -%}{%- endif -%}
  {%- endfor -%}
  {{ return(statements[0] if statements else '') }}
{% endmacro %}
