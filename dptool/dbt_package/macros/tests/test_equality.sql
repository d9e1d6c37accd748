{#-
  Fails with every row that the two relations do not share, counting duplicates (a multiset
  difference, both ways). Numbers are compared as floats rounded to `precision` digits; other
  values as strings. `compare_columns` restricts the comparison to some columns.
-#}
{% test equality(model, compare_model, compare_columns=none, precision=6) %}
{%- set wanted = (compare_columns or []) | map('lower') | list -%}
{%- set names = [] -%}
{%- set exprs = [] -%}
{%- for col in adapter.get_columns_in_relation(model) if not wanted or col.name | lower in wanted -%}
  {%- set quoted = adapter.quote(col.name) -%}
  {%- do names.append(quoted) -%}
  {%- if dptool.is_numeric_column(col) -%}
    {%- do exprs.append(dptool.round_double(quoted, precision) ~ ' as ' ~ quoted) -%}
  {%- else -%}
    {%- do exprs.append('cast(' ~ quoted ~ ' as ' ~ dbt.type_string() ~ ') as ' ~ quoted) -%}
  {%- endif -%}
{%- endfor %}
with actual as (
    select {{ exprs | join(', ') }} from {{ model }}
),
expected as (
    select {{ exprs | join(', ') }} from {{ compare_model }}
),
actual_counts as (
    select {{ names | join(', ') }}, count(*) as dptool_count from actual group by {{ names | join(', ') }}
),
expected_counts as (
    select {{ names | join(', ') }}, count(*) as dptool_count from expected group by {{ names | join(', ') }}
),
only_actual as (
    select * from actual_counts except select * from expected_counts
),
only_expected as (
    select * from expected_counts except select * from actual_counts
)
select 'only in model' as dptool_side, only_actual.* from only_actual
union all
select 'only in compare_model' as dptool_side, only_expected.* from only_expected
{% endtest %}
