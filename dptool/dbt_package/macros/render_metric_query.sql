{#-
  render_metric_query(q, shape, k) -> SQL text of a query spec.

  Shapes: value, grouped, ranking (top k by value), series (one row per `q.period`, in order) and
  stats (n, mean and sample variance of an avg() metric's measure per group: a significance test's
  inputs).

  Each predicate stands in its own parentheses: a rule's `a or b` must never bind to its neighbours.
  `q.columns` redefines row-level columns of the metric model (name -> expression): a rule that changes
  what a row counts as (a grace period, a neutral review) changes every metric that uses the column.
  A composite's spec (dptool.build_metric_spec) renders as its inputs' queries joined per group.
-#}
{% macro render_metric_query(q, shape='value', k=none) %}
  {%- set groups = dptool.quote_columns(q.metric, q.group_by) -%}
  {%- if q.inputs -%}
    {%- set body = dptool.render_composite_body(q, shape) -%}
  {%- else -%}
    {%- set body = dptool.render_metric_body(q, shape) -%}
  {%- endif -%}
  {%- if shape == 'ranking' -%}
    {%- if not groups or k is none -%}
      {{ exceptions.raise_compiler_error("dptool: a ranking of metric '" ~ q.metric ~ "' needs group_by and k") }}
    {%- endif -%}
    {%- set ranked -%}
    select * from (
      select
        {{ groups | join(', ') }},
        value,
        row_number() over (
          order by case when value is null then 1 else 0 end, value desc, {{ groups | join(', ') }}
        ) as rank
      from ({{ body }}) dptool_grouped
    ) dptool_ranked
    where rank <= {{ k | int }}
    {%- endset -%}
    {{ return(ranked) }}
  {%- elif shape in ('value', 'grouped', 'series', 'stats') -%}
    {{ return(body) }}
  {%- else -%}
    {{ exceptions.raise_compiler_error("dptool: unknown shape '" ~ shape ~ "' for metric '" ~ q.metric ~ "'") }}
  {%- endif -%}
{% endmacro %}

{#- render_metric_body(q, shape) -> the aggregate query of a metric over its model's rows. -#}
{% macro render_metric_body(q, shape) %}
  {%- set source -%}
    {%- if q.columns -%}
      {%- set quoted = dptool.quote_columns(q.metric, q.source_columns) -%}
      (select
      {%- for col in q.source_columns %}
        {% if col in q.columns %}{{ q.columns[col] }} as {% endif %}{{ quoted[loop.index0] }}{{ "," if not loop.last }}
      {%- endfor %}
      from {{ q.relation }})
    {%- else -%}
      {{ q.relation }}
    {%- endif -%}
  {%- endset -%}
  {%- if q.columns -%}
    {%- for col in q.columns if col not in q.source_columns -%}
      {{ exceptions.raise_compiler_error("dptool: a rule redefines column '" ~ col ~ "', which metric '" ~ q.metric ~ "' does not document") }}
    {%- endfor -%}
  {%- endif -%}
  {%- set items = [] -%}
  {%- set group_exprs = [] -%}
  {%- if q.period -%}
    {%- do items.append(q.period ~ ' as period') -%}
    {%- do group_exprs.append(q.period) -%}
  {%- endif -%}
  {%- for g in dptool.quote_columns(q.metric, q.group_by) -%}
    {%- do items.append(g) -%}
    {%- do group_exprs.append(g) -%}
  {%- endfor -%}
  {%- if shape == 'stats' -%}
    {%- set measure = dptool.avg_measure(q.value, q.metric) -%}
    {%- do items.append('count(' ~ measure ~ ') as n') -%}
    {%- do items.append('avg(' ~ measure ~ ') as mean') -%}
    {%- do items.append('var_samp(' ~ measure ~ ') as variance') -%}
  {%- else -%}
    {%- do items.append(q.value ~ ' as value') -%}
  {%- endif -%}
  {%- set body -%}
    select
      {{ items | join(',\n      ') }}
    from {{ source }} dptool_metric
    {%- if q.where %}
    where {% for p in q.where %}({{ p }}){{ " and " if not loop.last }}{% endfor %}
    {%- endif %}
    {%- if group_exprs %}
    group by {{ group_exprs | join(', ') }}
    {%- endif %}
    {%- if q.having %}
    having {% for p in q.having %}({{ p }}){{ " and " if not loop.last }}{% endfor %}
    {%- endif %}
    {{- dptool.render_order_and_limit(q, shape) }}
  {%- endset -%}
  {{ return(body) }}
{% endmacro %}

{#-
  render_composite_body(q, shape) -> a composite's query: each input's grouped query (its value cast to a
  double, named by the input's alias), joined on the period and the groups, and `q.value` over the aliases.
  A group appears only where every input has it: a group an input suppresses (or lacks) has no composite.
-#}
{% macro render_composite_body(q, shape) %}
  {%- if shape == 'stats' -%}
    {{ exceptions.raise_compiler_error("dptool: metric '" ~ q.metric ~ "' is a composite; a significance test needs avg(<measure>) over one metric's rows") }}
  {%- endif -%}
  {%- set keys = (['period'] if q.period else []) + dptool.quote_columns(q.metric, q.group_by) -%}
  {%- set body -%}
    select
      {%- for key in keys %}
      dptool_input_1.{{ key }},
      {%- endfor %}
      {{ q.value }} as value
    {%- for input in q.inputs %}
    {%- set i = loop.index %}
    {% if loop.first %}from{% elif keys %}inner join{% else %}cross join{% endif %} (
      select
        {%- for key in keys %}
        {{ key }},
        {%- endfor %}
        cast(value as {{ dptool.type_double() }}) as {{ input.alias }}
      from (
{{ dptool.render_metric_query(input.spec, 'grouped') }}
      ) dptool_value
    ) dptool_input_{{ i }}
    {%- if i > 1 and keys %}
      on {% for key in keys -%}
      (dptool_input_1.{{ key }} = dptool_input_{{ i }}.{{ key }} or (dptool_input_1.{{ key }} is null and dptool_input_{{ i }}.{{ key }} is null)){{ " and " if not loop.last }}
      {%- endfor %}
    {%- endif %}
    {%- endfor %}
    {{- dptool.render_order_and_limit(q, shape) }}
  {%- endset -%}
  {{ return(body) }}
{% endmacro %}

{% macro render_order_and_limit(q, shape) %}
  {%- set order_by = ['period'] if shape == 'series' else q.order_by -%}
  {%- if order_by and shape != 'ranking' %}
    order by {{ order_by | join(', ') }}
  {%- endif %}
  {%- if q.limit is not none and shape != 'ranking' %}
    limit {{ q.limit | int }}
  {%- endif %}
{% endmacro %}
