{#-
  avg_measure(value, metric) -> `x` for a metric whose value is `avg(x)`: the row-level measure whose
  per-group n, mean and variance a significance test needs. Any other value is a compile error.
-#}
{% macro avg_measure(value, metric) %}
  {%- set text = value | trim -%}
  {%- set state = namespace(depth=0, closed_early=false) -%}
  {%- if text[:4] | lower == 'avg(' and text[-1:] == ')' -%}
    {%- for ch in text[3:-1] -%}
      {%- if ch == '(' -%}{%- set state.depth = state.depth + 1 -%}
      {%- elif ch == ')' -%}{%- set state.depth = state.depth - 1 -%}{%- endif -%}
      {%- if state.depth == 0 and not loop.first -%}{%- set state.closed_early = true -%}{%- endif -%}
    {%- endfor -%}
    {%- if not state.closed_early -%}
      {{ return(text[4:-1]) }}
    {%- endif -%}
  {%- endif -%}
  {{ exceptions.raise_compiler_error("dptool: metric '" ~ metric ~ "' has value '" ~ value ~ "'; a significance test needs avg(<measure>)") }}
{% endmacro %}
