{#-
  quote_columns(metric, names) -> each column of a metric's rows as SQL: quoted through the adapter where SQL needs it
  (a name that is not letters, digits and underscores, a reserved word, or a column the metric model declares
  `quote: true`), as it is otherwise, so that unquoted names keep the warehouse's own case rules.
  dptool's Python side decides the same way (dptool.sql.column); reserved_words() is its list.

  What decides it is kept in `graph` (see metric_node), and a list is quoted in one call: a gold model quotes
  dozens of columns, and each macro call costs dbt more than the lookups it makes.
-#}
{% macro quote_columns(metric, names) %}
  {%- set known = graph.get('dptool_quoting') -%}
  {%- if known is none -%}
    {%- set known = {'reserved': dptool.reserved_words(), 'declared': {}} -%}
    {%- do graph.update({'dptool_quoting': known}) -%}
  {%- endif -%}
  {%- if metric not in known.declared -%}
    {#- the columns the metric's model (a composite: one below it) declares quote: true -#}
    {%- set declared = [] -%}
    {%- for m in dptool.metric_tree(metric) -%}
      {%- for column_name, column in dptool.metric_node(m).columns.items() if column.get('quote') -%}
        {%- do declared.append(column_name) -%}
      {%- endfor -%}
    {%- endfor -%}
    {%- do known.declared.update({metric: declared}) -%}
  {%- endif -%}
  {%- set quoted = [] -%}
  {%- for name in names -%}
    {%- if not modules.re.fullmatch('[A-Za-z_][A-Za-z0-9_]*', name) or name | lower in known.reserved
          or name in known.declared[metric] -%}
      {%- do quoted.append(adapter.quote(name)) -%}
    {%- else -%}
      {%- do quoted.append(name) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(quoted) }}
{% endmacro %}
