"""What the data holds for each dimension: distinct count, frequent values, rows per month."""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from dptool.catalog import Catalog
from dptool.warehouse import Warehouse

TOP_VALUES = 25


@dataclass(frozen=True)
class DimensionProfile:
    distinct: int
    top_values: tuple[tuple[object, int], ...] = ()  # most frequent first, ties by value
    months: tuple[tuple[int, int, int], ...] = field(default=())  # (year, month, rows) for temporal


def profile_dimensions(catalog: Catalog, warehouse: Warehouse) -> dict[str, DimensionProfile]:
    """One profile per dimension id, from a few aggregate queries per dimension."""
    dialect = warehouse.dialect
    out = {}
    for dim_id, dim in sorted(catalog.dimensions.items()):
        table = sqlglot.to_table(catalog.tables[dim.table].relation_name, dialect=dialect)
        col = exp.column(dim.column)
        distinct_sql = exp.select(exp.func("count", exp.Distinct(expressions=[col]))).from_(table)
        distinct = warehouse.query(distinct_sql.sql(dialect))[1][0][0]
        if dim.kind == "temporal":
            year = exp.Extract(this=exp.var("year"), expression=col.copy())
            month = exp.Extract(this=exp.var("month"), expression=col.copy())
            sql = (exp.select(year.as_("y"), month.as_("m"), exp.func("count", exp.Star()).as_("n"))
                   .from_(table).where(col.copy().is_(exp.null()).not_()).group_by("y", "m").order_by("y", "m"))
            rows = warehouse.query(sql.sql(dialect))[1]
            out[dim_id] = DimensionProfile(distinct, months=tuple((int(y), int(m), int(n)) for y, m, n in rows))
        else:
            n = exp.func("count", exp.Star())
            sql = (exp.select(col.copy(), n.as_("n")).from_(table).where(col.copy().is_(exp.null()).not_())
                   .group_by(col.copy()).order_by(exp.Ordered(this=exp.column("n"), desc=True), col.copy())
                   .limit(TOP_VALUES))
            rows = warehouse.query(sql.sql(dialect))[1]
            out[dim_id] = DimensionProfile(distinct, top_values=tuple((v, int(c)) for v, c in rows))
    return out
