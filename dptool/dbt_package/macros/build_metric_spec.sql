{#-
  build_metric_spec(metric, rules, where, group_by, period, having, columns) -> q, the metric's query spec
  with the caller's predicates and the metric's rules applied, in order.

  `rules` is a list (the rules of `metric` itself) or a mapping metric -> rules (for a composite: its own
  rules and those of each metric below it). A composite's own rules see its spec: they may change how the
  inputs combine (`value`, over the inputs' aliases), and the filters (`where`, `having`) and column
  redefinitions (`columns`) they add reach every input, as the caller's filters do. Each input is then built
  the same way, under its own rules, and kept as `q.inputs[i].spec`.
  A rule adds to the caller's `where`, `having` and `group_by` (the question's slice, its groups) and never takes
  from them: each rule's spec is checked (dptool.check_slice_kept), and a rule that replaced them fails the model.
-#}
{% macro build_metric_spec(metric, rules=[], where=[], group_by=[], period=none, having=[], columns={}, path=[]) %}
  {%- if metric in path -%}
    {{ exceptions.raise_compiler_error("dptool: composite metric '" ~ metric ~ "' is its own component (" ~ (path + [metric]) | join(' -> ') ~ ")") }}
  {%- endif -%}
  {%- set q = dptool.metric_spec(metric) -%}
  {%- do q.where.extend(where) -%}
  {%- do q.group_by.extend(group_by) -%}
  {%- do q.update({'period': period}) -%}
  {%- do q.having.extend(having) -%}
  {%- for col, expr in columns.items() if col in q.source_columns -%}
    {%- do q.columns.update({col: expr}) -%}
  {%- endfor -%}
  {#- a namespace, because a plain `set` inside a for loop does not outlive the loop -#}
  {%- set state = namespace(q=q) -%}
  {%- for rule_id in (rules.get(metric, []) if rules is mapping else rules) -%}
    {%- set rule_macro = context.get('rule__' ~ rule_id) -%}
    {%- if rule_macro is none -%}
      {{ exceptions.raise_compiler_error("dptool: rule macro 'rule__" ~ rule_id ~ "' not found (used by metric '" ~ metric ~ "')") }}
    {%- endif -%}
    {%- set changed = rule_macro(metric, state.q) -%}
    {%- if changed is mapping -%}{%- set state.q = changed -%}
    {#- nothing returned (the macro rendered only whitespace) is a rule that changed q in place -#}
    {%- elif changed is not none and (changed is not string or changed | trim) -%}
      {{ exceptions.raise_compiler_error("dptool: rule macro 'rule__" ~ rule_id ~ "' returned " ~ dptool.describe_value(changed) ~ ", not the query spec q (metric '" ~ metric ~ "'); a rule changes q and returns it: {{ return(q) }}") }}
    {%- endif -%}
    {%- do dptool.check_slice_kept(metric, rule_id, state.q, {'where': where, 'having': having, 'group_by': group_by}) -%}
  {%- endfor -%}
  {%- set q = state.q -%}
  {%- if q.inputs -%}
    {%- do dptool.check_inputs_referenced(metric, q.inputs) -%}
    {%- for col in q.columns if col not in q.source_columns -%}
      {{ exceptions.raise_compiler_error("dptool: a rule redefines column '" ~ col ~ "', which no component of metric '" ~ metric ~ "' documents") }}
    {%- endfor -%}
    {%- for input in q.inputs -%}
      {%- do input.update({'spec': dptool.build_metric_spec(
            input.metric, rules if rules is mapping else [], q.where + input.where, q.group_by, q.period,
            q.having, q.columns, path + [metric])}) -%}
    {%- endfor -%}
  {%- endif -%}
  {{ return(q) }}
{% endmacro %}

{#-
  check_inputs_referenced(metric, inputs): dbt only lets a model read what it `ref`s at parse time, when the
  graph is not there to say what a composite is made of. The caller names the inputs: as keys of a `rules`
  mapping, or with a `-- depends_on: {{ ref('<input>') }}` line.
-#}
{% macro check_inputs_referenced(metric, inputs) %}
  {%- if model is not defined or not model -%}{{ return(none) }}{%- endif -%}
  {%- set deps = model.get('depends_on', {}).get('nodes', []) -%}
  {%- for input in inputs -%}
    {%- set node = dptool.metric_node(input.metric) -%}
    {%- if node.unique_id not in deps and not dptool.metric_inputs(input.metric) -%}
      {{ exceptions.raise_compiler_error("dptool: metric '" ~ metric ~ "' is computed from '" ~ input.metric ~ "', which model '" ~ model.name ~ "' does not ref; pass rules as a mapping that names every metric it is made of, or add `-- depends_on: {{ ref('" ~ input.metric ~ "') }}`") }}
    {%- endif -%}
  {%- endfor -%}
{% endmacro %}

{#- ref_metrics(metric, rules): at parse time, ref the metric and every metric a `rules` mapping names. -#}
{% macro ref_metrics(metric, rules=[]) %}
  {%- do ref(metric) -%}
  {%- if rules is mapping -%}
    {%- for name in rules if name != metric -%}{%- do ref(name) -%}{%- endfor -%}
  {%- endif -%}
{% endmacro %}

{#-
  check_slice_kept(metric, rule_id, q, given): every predicate and group the caller gave (`given`: where, having,
  group_by) is still in q after rule__<rule_id> changed it. A rule that sets `q.where` anew (q.update({'where':
  [...]})) would drop the question's slice: "MG in Q1 2017" and "DF in Q2 2018" would get one gold.
-#}
{% macro check_slice_kept(metric, rule_id, q, given) %}
  {%- for key, items in given.items() -%}
    {%- set now = q.get(key) if q is mapping else none -%}
    {%- for item in items if now is none or item not in now -%}
      {{ exceptions.raise_compiler_error("dptool: rule macro 'rule__" ~ rule_id ~ "' removed " ~ key ~ " `" ~ item ~ "` of metric '" ~ metric ~ "' (the question's slice); a rule adds to q." ~ key ~ " (q." ~ key ~ ".append(...)) and keeps what the caller put there") }}
    {%- endfor -%}
  {%- endfor -%}
  {#- a slice filters a column as the rules redefine it; one redefined to a constant holds every row or none -#}
  {%- for col, expr in (q.get('columns') or {}).items() if q is mapping and dptool.is_constant_sql(expr) -%}
    {%- for key, items in given.items() -%}
      {%- for item in items if modules.re.search('(?<![\\w.])' ~ modules.re.escape(col) ~ '(?!\\w)', item | string) -%}
        {{ exceptions.raise_compiler_error("dptool: rule macro 'rule__" ~ rule_id ~ "' sets column '" ~ col ~ "' of metric '" ~ metric ~ "' to the constant `" ~ expr ~ "`, which the question's " ~ key ~ " `" ~ item ~ "` reads: the slice would hold every row or none; ask no question on that column under this rule") }}
      {%- endfor -%}
    {%- endfor -%}
  {%- endfor -%}
{% endmacro %}

{#- is_constant_sql(expr): SQL that reads no column: a number, a quoted text, NULL, TRUE/FALSE, a typed literal
    (date '2017-01-01') or the cast of one. What dptool/project/rule_columns.py finds in a rule's text, at build. -#}
{% macro is_constant_sql(expr) %}
  {%- set literal = "(null|true|false|[-+]?\\d+(\\.\\d+)?([eE][-+]?\\d+)?|'([^']|'')*'|(date|timestamp|interval)\\s*'([^']|'')*')" -%}
  {%- set pattern = "\\s*(" ~ literal ~ "|cast\\s*\\(\\s*" ~ literal ~ "\\s+as\\s+[\\w ]+(\\([\\d,\\s]*\\))?\\s*\\))\\s*" -%}
  {{ return(modules.re.fullmatch(pattern, expr | string, modules.re.I) is not none) }}
{% endmacro %}

{#- describe_value(value) -> what a value is, shortly, for an error: a string's first words, a list, a number -#}
{% macro describe_value(value) %}
  {%- if value is string -%}
    {%- set text = value | trim | replace('\n', ' ') -%}
    {{ return("the text '" ~ (text[:60] ~ ('...' if text | length > 60 else '')) ~ "'") }}
  {%- elif value is mapping -%}{{ return('a mapping') }}
  {%- elif value is iterable -%}{{ return('a list') }}
  {%- else -%}{{ return("the value '" ~ value ~ "'") }}
  {%- endif -%}
{% endmacro %}
