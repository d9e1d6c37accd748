{#-
  quote_column(metric, name) -> a column of a metric's rows as SQL: quoted through the adapter where SQL needs it
  (a name that is not letters, digits and underscores, a reserved word, or a column the metric model declares
  `quote: true`), as it is otherwise, so that unquoted names keep the warehouse's own case rules.
  dptool's Python side decides the same way (dptool.sql.column); reserved_words() is its list.
-#}
{% macro quote_column(metric, name) %}
  {%- if not modules.re.fullmatch('[A-Za-z_][A-Za-z0-9_]*', name) or name | lower in dptool.reserved_words()
        or dptool.declares_quote(metric, name) -%}
    {{ return(adapter.quote(name)) }}
  {%- endif -%}
  {{ return(name) }}
{% endmacro %}

{#- declares_quote(metric, name) -> whether the metric's model (a composite: one below it) sets quote: true on the column -#}
{% macro declares_quote(metric, name) %}
  {%- for m in dptool.metric_tree(metric) -%}
    {%- set column = dptool.metric_node(m).columns.get(name) -%}
    {%- if column and column.get('quote') -%}{{ return(true) }}{%- endif -%}
  {%- endfor -%}
  {{ return(false) }}
{% endmacro %}

{#- reserved_words() -> the words a column name is quoted for: DuckDB's reserved keywords (PostgreSQL's and a few) -#}
{% macro reserved_words() %}
  {{ return([
    'all', 'analyse', 'analyze', 'and', 'anti', 'any', 'array', 'as', 'asc', 'asof', 'asymmetric', 'at',
    'authorization', 'binary', 'both', 'by', 'case', 'cast', 'check', 'collate', 'collation', 'column', 'columns',
    'concurrently', 'constraint', 'create', 'cross', 'current_catalog', 'current_date', 'current_role',
    'current_time', 'current_timestamp', 'current_user', 'default', 'deferrable', 'desc', 'describe', 'distinct',
    'do', 'else', 'end', 'except', 'false', 'fetch', 'for', 'foreign', 'freeze', 'from', 'full', 'generated',
    'glob', 'grant', 'group', 'having', 'ilike', 'in', 'initially', 'inner', 'intersect', 'into', 'is', 'isnull',
    'join', 'lambda', 'lateral', 'leading', 'left', 'like', 'limit', 'localtime', 'localtimestamp', 'map',
    'natural', 'not', 'notnull', 'null', 'offset', 'on', 'only', 'or', 'order', 'outer', 'overlaps', 'pivot',
    'pivot_longer', 'pivot_wider', 'placing', 'positional', 'primary', 'qualify', 'references', 'returning',
    'right', 'select', 'semi', 'session_user', 'show', 'similar', 'some', 'struct', 'summarize', 'symmetric',
    'table', 'tablesample', 'then', 'to', 'trailing', 'true', 'try_cast', 'tuple', 'union', 'unique', 'unpack',
    'unpivot', 'user', 'using', 'variadic', 'verbose', 'when', 'where', 'window', 'with'
  ]) }}
{% endmacro %}
