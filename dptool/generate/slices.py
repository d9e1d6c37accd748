"""A slice on a column of another table than the entity a metric counts per: when its two readings differ.

"Revenue per Order for seller state RJ" has two readings: the metric's own rows whose seller state is RJ (the RJ
sellers' order items, over the orders that hold one: what every gold computes, as a `where` on the metric's rows),
or the whole of every order that has an RJ seller. They differ when

- the metric counts distinct entities (a `count(distinct order_id)` in its value, or one of its components'), beside
  another aggregate (a sum, an average) that reads the rows themselves, and
- the slice column is not an attribute of that entity: its table is neither the entity's table nor one the entity's
  table reaches through the declared joins (many-to-one: an order has one customer, but many sellers).

The entity's table is the table a join reaches by that key (`order_id` -> orders); a key that ends with a joined key
(`active_seller_id` -> `seller_id`) is that key's. Where none is found, the readings are taken to agree.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from dptool.project.catalog import Catalog


def _aggregates(value: str) -> list[exp.AggFunc]:
    try:
        tree = sqlglot.parse_one(value)
    except sqlglot.errors.ParseError:
        return []
    # the outermost aggregates: what reads the rows (an aggregate inside another is part of it)
    return [a for a in tree.find_all(exp.AggFunc) if a.find_ancestor(exp.AggFunc) is None]


def _distinct_key(agg: exp.AggFunc) -> str | None:
    """`order_id` of `count(distinct order_id)`; None for any other aggregate."""
    if isinstance(agg, exp.Count) and isinstance(agg.this, exp.Distinct) and len(agg.this.expressions) == 1 \
            and isinstance(agg.this.expressions[0], exp.Column):
        return agg.this.expressions[0].name
    return None


def _entity_table(key: str, catalog: Catalog, tables: tuple[str, ...]) -> str | None:
    joined = [j for j in catalog.joins if j.to_table in tables]
    exact = next((j.to_table for j in joined if j.to_column == key), None)
    return exact or next((j.to_table for j in sorted(joined, key=lambda j: -len(j.to_column))
                          if key.endswith("_" + j.to_column)), None)


def _attributes(table: str, catalog: Catalog) -> set[str]:
    """The table and every table it reaches through the joins (each row of it has one row there)."""
    seen, todo = {table}, [table]
    while todo:
        current = todo.pop()
        for j in catalog.joins:
            if j.from_table == current and j.to_table not in seen:
                seen.add(j.to_table)
                todo.append(j.to_table)
    return seen


def entity_of_other_rows(metric_id: str, dimension_id: str, catalog: Catalog) -> str | None:
    """The entity column (`order_id`) a slice on the dimension does not hold whole, where the slice's two readings
    differ for the metric; None where they agree."""
    metric = catalog.metrics[metric_id]
    dim = catalog.dimensions[dimension_id]
    leaves = [catalog.metrics[m] for m in catalog.metric_tree(metric_id) if not catalog.metrics[m].components]
    aggregates = [a for m in leaves for a in _aggregates(m.value)]
    keys = [k for k in (_distinct_key(a) for a in aggregates) if k]
    if not keys or all(_distinct_key(a) for a in aggregates):
        return None  # counting entities alone: an entity with a row of the value counts either way
    for key in dict.fromkeys(keys):
        table = _entity_table(key, catalog, metric.tables)
        if table is not None and dim.table not in _attributes(table, catalog):
            return key
    return None


def entity_noun(key: str) -> str:
    """An entity column as a word: `order_id` is "order", `active_seller_id` "active seller"."""
    return key.removesuffix("_id").replace("_", " ").strip() or key
