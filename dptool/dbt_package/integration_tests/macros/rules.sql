{#-
  Business rules of the integration tests: root-project macros `rule__<id>(metric, q)` that change the
  query spec q of a metric, as in a real project (see macros/ecommerce/ of the demo).
-#}

{% macro rule__exclude_internal(metric, q) %}
  {#- staff purchases are not sales; an order with no channel recorded stays. A predicate with `or`:
      it must be parenthesized, or it binds to the caller's predicates. Mutates q, returns nothing. -#}
  {% do q.where.append("channel is null or channel <> 'internal'") %}
{% endmacro %}

{% macro rule__returned_earn_nothing(metric, q) %}
  {#- a returned order earns nothing (a refund too): a row-level column override through q.columns -#}
  {% do q.columns.update({'amount': "case when status = 'returned' then 0 else amount end"}) %}
  {{ return(q) }}
{% endmacro %}

{% macro rule__regions_with_three_orders(metric, q) %}
  {#- a group with fewer than three orders is too small to report: a having predicate -#}
  {% do q.having.append('count(*) >= 3') %}
  {{ return(q) }}
{% endmacro %}

{% macro rule__average_order_value(metric, q) %}
  {#- the answer is the average order, not the total: replaces q.value in place -#}
  {% do q.update({'value': 'avg(amount)'}) %}
  {{ return(q) }}
{% endmacro %}

{% macro rule__exclude_future_orders(metric, q) %}
  {#- a rule that changes nothing on this data (no order is from 2030): rule_changes_answer must fail -#}
  {% do q.where.append('purchased_at < ' ~ dptool.timestamp_literal('2030-01-01')) %}
  {{ return(q) }}
{% endmacro %}

{% macro rule__average_order_value_as_new_spec(metric, q) %}
  {#- the same change as average_order_value, but returned as a new spec instead of changing q in place:
      metric_query documents `if changed is mapping -> q = changed` -#}
  {% set changed = {} %}
  {% do changed.update(q) %}
  {% do changed.update({'value': 'avg(amount)'}) %}
  {{ return(changed) }}
{% endmacro %}

{% macro rule__delivered_only_keeping_slice(metric, q) %}
  {#- only delivered orders count: sets q.where anew, and keeps every predicate the caller put there -#}
  {% do q.update({'where': q.where + ["status = 'delivered'"]}) %}
  {{ return(q) }}
{% endmacro %}

{% macro rule__delivered_only_dropping_slice(metric, q) %}
  {#- the same rule written wrong: q.where set anew drops the caller's predicates (the question's slice), so
      every slice would get one answer; build_metric_spec must fail the model -#}
  {% do q.update({'where': ["status = 'delivered'"]}) %}
  {{ return(q) }}
{% endmacro %}
