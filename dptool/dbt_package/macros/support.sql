{#-
  support(metric, rules, where, group_by, period, entity, min_rows, min_entities, counted, min_events) -> the
  support of a gold answer: per group (and period) of the rule-modified query, the rows, distinct entities and
  a rate's events it rests on.

  The spec is the gold variant's (dptool.build_metric_spec, same rules, filters, groups and period), rendered
  with its value replaced by the counts: `support_rows` (the rows the filters and rules leave that the value
  reads: `counted[<metric>].rows`, a predicate, e.g. `(amount) is not null` for avg(amount); every row
  without one; `support_all_rows`: every row, as a ranking's `having count(*)` counts), `support_entities` (count(distinct <entity>) among them), `support_events` (those of them
  `counted[<metric>].events` holds, a rate's numerator events; NULL without one), and `value`, 1 when the
  group passes every `having` of its rules (a suppression) and 0 when a rule removes it. No `having` filters the rows, so a removed group is
  still listed. A composite gives one row per leaf metric it is computed from and group (`support_input`).
  `entity` lists the entity columns to try, in order, after a leaf's own (`counted[<metric>].entity`); the
  first the metric model has is counted (none: the rows themselves). The dbt var `dptool_min_support` ({rows, entities, entity}) overrides the minimum
  and the entity; the minimum read is returned as `support_min_rows` and `support_min_entities`.
-#}
{% macro support(metric, rules=[], where=[], group_by=[], period=none, entity=[], min_rows=30, min_entities=10,
                  counted={}, min_events=10) %}
  {%- if not execute -%}
    {%- do dptool.ref_metrics(metric, rules) -%}
    {{ return('select 1 as value') }}
  {%- endif -%}
  {%- set setting = var('dptool_min_support', {}) -%}
  {%- set chosen = setting.get('entity') if setting is mapping and setting.get('entity') else [] -%}
  {%- set chosen = [chosen] if chosen is string else chosen -%}
  {%- set rows = (setting.get('rows', min_rows) if setting is mapping else min_rows) | int -%}
  {%- set entities = (setting.get('entities', min_entities) if setting is mapping else min_entities) | int -%}
  {%- set events = (setting.get('events', min_events) if setting is mapping else min_events) | int -%}
  {%- set q = dptool.build_metric_spec(metric, rules, where, group_by, period, []) -%}
  {%- set parts = [] -%}
  {%- do dptool.support_parts(q, entity, rows, entities, parts, counted, events, chosen) -%}
  {{ return(parts | join('\nunion all\n')) }}
{% endmacro %}

{#- support_parts(q, entity, rows, entities, parts, counted, events, chosen): one support query per leaf spec of
    q, appended to parts. A leaf counts the first entity column its rows have of: the var's (`chosen`), its own
    (`counted[<leaf>].entity`: the sellers a per-seller denominator counts), then `entity`. -#}
{% macro support_parts(q, entity, rows, entities, parts, counted={}, events=10, chosen=[]) %}
  {%- if q.inputs -%}
    {#- each input's spec already holds the composite's filters and having (dptool.build_metric_spec) -#}
    {%- for input in q.inputs -%}
      {%- do dptool.support_parts(input.spec, entity, rows, entities, parts, counted, events, chosen) -%}
    {%- endfor -%}
    {{ return(parts) }}
  {%- endif -%}
  {%- set reads = counted.get(q.metric, {}) -%}
  {%- set own = reads.get('entity') or [] -%}
  {%- set column = namespace(name=none) -%}
  {%- for c in chosen + ([own] if own is string else own) + entity if column.name is none and c in q.source_columns -%}
    {%- set column.name = c -%}
  {%- endfor -%}
  {%- set kept = '(' ~ q.having | join(') and (') ~ ')' if q.having else '1 = 1' -%}
  {%- set read = '(' ~ reads['rows'] ~ ')' if reads.get('rows') else none -%}
  {%- set event = '(' ~ reads['events'] ~ ')' ~ (' and ' ~ read if read else '') if reads.get('events') else none -%}
  {%- set entity_sql = dptool.quote_column(q.metric, column.name) if column.name else none -%}
  {%- set counts = "'" ~ q.metric ~ "' as support_input, "
      ~ ("'" ~ column.name ~ "'" if column.name else "cast(null as " ~ dbt.type_string() ~ ")") ~ " as support_entity, "
      ~ rows ~ " as support_min_rows, " ~ entities ~ " as support_min_entities, " ~ events ~ " as support_min_events, "
      ~ ("count(case when " ~ read ~ " then 1 end)" if read else "count(*)") ~ " as support_rows, "
      ~ "count(*) as support_all_rows, "
      ~ ("count(distinct " ~ ("case when " ~ read ~ " then " ~ entity_sql ~ " end" if read else entity_sql) ~ ")"
         if entity_sql else ("count(case when " ~ read ~ " then 1 end)" if read else "count(*)"))
      ~ " as support_entities, "
      ~ ("count(case when " ~ event ~ " then 1 end)" if event else "cast(null as " ~ dbt.type_int() ~ ")")
      ~ " as support_events, "
      ~ "case when " ~ kept ~ " then 1 else 0 end" -%}
  {%- set spec = {} -%}
  {%- do spec.update(q) -%}
  {%- do spec.update({'value': counts, 'having': [], 'order_by': [], 'limit': none}) -%}
  {%- do parts.append(dptool.render_metric_body(spec, 'grouped')) -%}
  {{ return(parts) }}
{% endmacro %}
