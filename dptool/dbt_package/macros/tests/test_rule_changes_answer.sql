{#-
  Fails for every variant whose rows equal the base variant's rows: a rule that does not change the
  answer makes a task that does not test the rule (DI-Bench's counterfactual check). Numbers are
  compared after rounding to `precision` digits, so that float noise is not a change. `variants`
  names the variants to check; by default, every variant present other than the base.

  Its severity is `warn` unless a project says otherwise: whether a rule finds something to change is a
  fact about the data (a sample may hold no row a rule applies to), a finding to report, not a broken
  build. `dptool generate` never ships a task whose rule changes nothing, and lists the rules that change
  nothing in the benchmark card. A project that wants a failure sets `severity: error` on the test, or
  `+severity: error` for a folder of tests in dbt_project.yml.
-#}
{% test rule_changes_answer(model, variants=none, variant_column='variant', base_variant='base', precision=9) %}
{{ config(severity='warn') }}
{%- set names = [] -%}
{%- set exprs = [] -%}
{%- for col in adapter.get_columns_in_relation(model) if col.name | lower != variant_column | lower -%}
  {%- set quoted = adapter.quote(col.name) -%}
  {%- do names.append(quoted) -%}
  {%- if dptool.is_numeric_column(col) -%}
    {%- do exprs.append(dptool.round_double(quoted, precision) ~ ' as ' ~ quoted) -%}
  {%- else -%}
    {%- do exprs.append(quoted) -%}
  {%- endif -%}
{%- endfor %}
with model_rows as (
    select {{ variant_column }} as dptool_variant, {{ exprs | join(', ') }} from {{ model }}
),
checked as (
{%- if variants is none %}
    select distinct dptool_variant from model_rows where dptool_variant <> '{{ base_variant }}'
{%- else %}
    {%- for v in variants %}
    select '{{ v }}' as dptool_variant{{ " union all" if not loop.last }}
    {%- endfor %}
{%- endif %}
),
base_per_variant as (
    select c.dptool_variant, {% for n in names %}b.{{ n }}{{ ", " if not loop.last }}{% endfor %}
    from model_rows b cross join checked c
    where b.dptool_variant = '{{ base_variant }}'
),
variant_rows as (
    select m.* from model_rows m join checked c on m.dptool_variant = c.dptool_variant
),
differing as (
    (select * from variant_rows except select * from base_per_variant)
    union all
    (select * from base_per_variant except select * from variant_rows)
)
select dptool_variant, 'the rule does not change the answer' as failure
from checked
where dptool_variant not in (select dptool_variant from differing)
{% endtest %}
