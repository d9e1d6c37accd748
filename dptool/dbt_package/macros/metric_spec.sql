{#-
  metric_spec(metric, relation) -> q: the unmodified query spec of a metric, read from dbt's graph.

  A composite (meta.dptool.metric.components) has no relation: its `value` is an expression over its
  inputs, and `q.inputs` lists them (metric, alias: the name `value` uses, where: the input's own filter).
  Its `source_columns` are every column some input documents (what a rule of the composite may redefine).
-#}
{% macro metric_spec(metric, relation=none) %}
  {%- set decl = dptool.metric_decl(metric) -%}
  {%- set inputs = dptool.metric_inputs(metric) -%}
  {%- if inputs -%}
    {%- set columns = dptool.metric_columns(metric) -%}
  {%- else -%}
    {%- set columns = dptool.metric_node(metric).columns.keys() | list -%}
    {%- if relation is none -%}{%- set relation = ref(metric) -%}{%- endif -%}
  {%- endif -%}
  {{ return({
      'metric': metric,
      'relation': relation,
      'source_columns': columns,
      'columns': {},
      'period': none,
      'value': decl['value'],
      'where': [],
      'having': [],
      'group_by': [],
      'order_by': [],
      'limit': none,
      'inputs': inputs,
  }) }}
{% endmacro %}

{#-
  metric_node(metric) -> the graph node of the model named `metric` (the first, for a versioned model).

  Found in an index of the graph's models by name, built at the first call and kept in `graph` itself: dbt
  builds `graph` once per manifest and hands every node of the run the same dict, so the index lives as long as
  the graph it indexes (a scan of graph.nodes per call made a gold model's cost grow with the project).
-#}
{% macro metric_node(metric) %}
  {%- set index = graph.get('dptool_models_by_name') -%}
  {%- if index is none -%}
    {%- set index = {} -%}
    {%- for node in graph.nodes.values() if node.resource_type == 'model' and node.name not in index -%}
      {%- do index.update({node.name: node}) -%}
    {%- endfor -%}
    {%- do graph.update({'dptool_models_by_name': index}) -%}
  {%- endif -%}
  {%- if metric not in index -%}
    {{ exceptions.raise_compiler_error("dptool: no model named '" ~ metric ~ "' declares a metric") }}
  {%- endif -%}
  {{ return(index[metric]) }}
{% endmacro %}

{#- metric_decl(metric) -> the model's meta.dptool.metric (a compile error without `value`). -#}
{% macro metric_decl(metric) %}
  {%- set known = graph.setdefault('dptool_metric_decls', {}) -%}  {#- kept as metric_node keeps its index -#}
  {%- if metric not in known -%}
    {%- set decl = dptool.metric_node(metric).meta.get('dptool', {}).get('metric', {}) -%}
    {%- if not decl.get('value') -%}
      {{ exceptions.raise_compiler_error("dptool: model '" ~ metric ~ "' has no meta.dptool.metric.value") }}
    {%- endif -%}
    {%- do known.update({metric: decl}) -%}
  {%- endif -%}
  {{ return(known[metric]) }}
{% endmacro %}

{#-
  metric_inputs(metric) -> the inputs of a composite, [] for any other metric. `components` lists metric
  names, or mappings {metric, alias, where} for an input with its own filter (a ratio's filtered numerator).
-#}
{% macro metric_inputs(metric) %}
  {%- set known = graph.setdefault('dptool_metric_inputs', {}) -%}  {#- kept as metric_node keeps its index -#}
  {%- if metric not in known -%}
    {%- set inputs = [] -%}
    {%- set components = dptool.metric_decl(metric).get('components') or [] -%}
    {%- if components is string -%}{%- set components = [components] -%}{%- endif -%}
    {%- for c in components -%}
      {%- if c is mapping -%}
        {%- set where = c.get('where') or [] -%}
        {%- do inputs.append({'metric': c['metric'], 'alias': c.get('alias') or c['metric'],
                              'where': [where] if where is string else where}) -%}
      {%- else -%}
        {%- do inputs.append({'metric': c, 'alias': c, 'where': []}) -%}
      {%- endif -%}
    {%- endfor -%}
    {%- do known.update({metric: inputs}) -%}
  {%- endif -%}
  {#- new lists and mappings each call: a rule may change the inputs of the spec it is given -#}
  {%- set inputs = [] -%}
  {%- for i in known[metric] -%}
    {%- do inputs.append({'metric': i.metric, 'alias': i.alias, 'where': i.where | list}) -%}
  {%- endfor -%}
  {{ return(inputs) }}
{% endmacro %}

{#- metric_columns(metric) -> the columns of a metric model; a composite's: every column of its inputs, once. -#}
{% macro metric_columns(metric, path=[]) %}
  {%- if metric in path -%}
    {{ exceptions.raise_compiler_error("dptool: composite metric '" ~ metric ~ "' is its own component (" ~ (path + [metric]) | join(' -> ') ~ ")") }}
  {%- endif -%}
  {%- set inputs = dptool.metric_inputs(metric) -%}
  {%- if not inputs -%}
    {{ return(dptool.metric_node(metric).columns.keys() | list) }}
  {%- endif -%}
  {%- set columns = [] -%}
  {%- for input in inputs -%}
    {%- for col in dptool.metric_columns(input.metric, path + [metric]) if col not in columns -%}
      {%- do columns.append(col) -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(columns) }}
{% endmacro %}
