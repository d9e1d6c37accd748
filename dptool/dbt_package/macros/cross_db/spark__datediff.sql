{#-
  spark__datediff(first_date, second_date, datepart) -> dbt.datediff on Spark, when the project dispatches dbt's
  namespace to dptool (as for seeds; README: "Beyond one machine"). Hours, minutes and seconds count the boundaries
  crossed, as dbt-duckdb's and dbt-postgres's datediff do (dbt-spark's rounds the elapsed time up), in SQL that a
  gold_sql transpiled to DuckDB runs: dbt-spark's wraps each side in assert_true and to_unix_timestamp, which DuckDB
  lacks. Other dateparts: dbt-spark's own.
-#}
{% macro spark__datediff(first_date, second_date, datepart) %}
  {%- set seconds = {'hour': 3600, 'minute': 60, 'second': 1} -%}
  {%- set part = datepart | string | trim | lower | replace("'", "") -%}
  {%- if part in seconds -%}
    ((unix_seconds(date_trunc('{{ part }}', {{ second_date }})) - unix_seconds(date_trunc('{{ part }}', {{ first_date }}))) div {{ seconds[part] }})
  {%- else -%}
    {{ return(dbt.spark__datediff(first_date, second_date, datepart)) }}
  {%- endif -%}
{% endmacro %}
