{#- metric_spec(metric, relation) -> q: the unmodified query spec of a metric, read from dbt's graph. -#}
{% macro metric_spec(metric, relation) %}
  {%- set node = dptool.metric_node(metric) -%}
  {%- set decl = node.meta.get('dptool', {}).get('metric', {}) -%}
  {%- if not decl.get('value') -%}
    {{ exceptions.raise_compiler_error("dptool: model '" ~ metric ~ "' has no meta.dptool.metric.value") }}
  {%- endif -%}
  {{ return({
      'metric': metric,
      'relation': relation,
      'source_columns': node.columns.keys() | list,
      'columns': {},
      'period': none,
      'value': decl['value'],
      'where': [],
      'having': [],
      'group_by': [],
      'order_by': [],
      'limit': none,
  }) }}
{% endmacro %}

{% macro metric_node(metric) %}
  {%- for node in graph.nodes.values() if node.resource_type == 'model' and node.name == metric -%}
    {{ return(node) }}
  {%- endfor -%}
  {{ exceptions.raise_compiler_error("dptool: no model named '" ~ metric ~ "' declares a metric") }}
{% endmacro %}
