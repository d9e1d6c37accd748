{#-
  spark__dateadd(datepart, interval, from_date_or_timestamp) -> dbt.dateadd on Spark, when the project dispatches
  dbt's namespace to dptool (as for seeds; README: "Beyond one machine"): Spark's timestampadd, which keeps the time
  of day as dbt-duckdb's and dbt-postgres's do, in SQL that a gold_sql transpiled to DuckDB runs (`x + INTERVAL n
  YEAR`): dbt-spark's wraps the value in assert_true and to_unix_timestamp, which DuckDB lacks.
-#}
{% macro spark__dateadd(datepart, interval, from_date_or_timestamp) %}
  {{- "timestampadd(" ~ (datepart | string | trim | replace("'", "")) ~ ", " ~ interval ~ ", " ~ from_date_or_timestamp ~ ")" -}}
{% endmacro %}
