{#-
  composite_metric(components) -> the model of a composite metric: its overall value, computed from its
  components (each a metric model, `ref`'d here so that dbt's lineage shows what the composite is made of).

  A composite declares `meta.dptool.metric.components` and a `value` over their names (e.g. `gmv /
  active_sellers`); dptool.metric_query never reads this model's rows: it computes a composite per group
  from its components, each under the rules that govern it.
-#}
{% macro composite_metric(components) %}
  {%- for name in ([components] if components is string else components) -%}
    {%- do ref(name) -%}
  {%- endfor -%}
  {%- if not execute -%}
    {{ return('select 1 as value') }}
  {%- endif -%}
  {{ return(dptool.render_metric_query(dptool.build_metric_spec(model.name), 'value')) }}
{% endmacro %}
