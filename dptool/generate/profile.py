"""What the data holds for each dimension: distinct count, frequent values, rows per month; and the months
in which every table a metric reads has data."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Decimal

import sqlglot
from sqlglot import exp

from dptool.errors import DptoolError
from dptool.project.catalog import Catalog, Metric
from dptool.project.warehouse import Warehouse
from dptool.sql import column as sql_column

TOP_VALUES = 25


@dataclass(frozen=True)
class DimensionProfile:
    distinct: int
    top_values: tuple[tuple[object, int], ...] = ()  # most frequent first, ties by value
    months: tuple[tuple[int, int, int], ...] = field(default=())  # (year, month, rows) for temporal
    # how a temporal column holds time: "timestamp" (or date), or "yymmdd" (an integer such as 970315,
    # as in the Berka bank data)
    encoding: str = ""


def profile_dimensions(catalog: Catalog, warehouse: Warehouse) -> dict[str, DimensionProfile]:
    """One profile per dimension id, from a few aggregate queries per dimension."""
    dialect = warehouse.dialect
    out = {}
    columns: dict[str, list[str]] = {}  # table id -> its columns, as the warehouse has them
    for dim_id, dim in sorted(catalog.dimensions.items()):
        table = sqlglot.to_table(catalog.tables[dim.table].relation_name, dialect=dialect)
        if dim.table not in columns:
            columns[dim.table] = warehouse.query(exp.select(exp.Star()).from_(table).limit(0).sql(dialect))[0]
        if dim.column.casefold() not in {c.casefold() for c in columns[dim.table]}:
            # a declaration on a column the table lacks: said where it is declared, not as the warehouse's error
            raise DptoolError(f"{dim.where or dim.table}: columns.{dim.column}.meta.dptool.dimension: "
                              f"{catalog.tables[dim.table].name} has no column {dim.column!r} (its columns: "
                              f"{', '.join(columns[dim.table][:12])}{', ...' if len(columns[dim.table]) > 12 else ''})")
        col = sql_column(dim.column, dim.quote)
        distinct_sql = exp.select(exp.func("count", exp.Distinct(expressions=[col]))).from_(table)
        distinct = warehouse.query(distinct_sql.sql(dialect))[1][0][0]
        not_null = col.copy().is_(exp.null()).not_()
        if dim.kind == "temporal":
            encoding = _encoding(warehouse, table, col, not_null, f"{catalog.tables[dim.table].name}.{dim.column}")
            year, month = _year_month(col, encoding)
            sql = (exp.select(year.as_("y"), month.as_("m"), exp.func("count", exp.Star()).as_("n"))
                   .from_(table).where(not_null).group_by(exp.column("y"), exp.column("m"))
                   .order_by(exp.column("y"), exp.column("m")))
            rows = warehouse.query(sql.sql(dialect))[1]
            out[dim_id] = DimensionProfile(distinct, months=tuple((int(y), int(m), int(n)) for y, m, n in rows),
                                           encoding=encoding)
        else:
            n = exp.func("count", exp.Star())
            sql = (exp.select(col.copy(), n.as_("n")).from_(table).where(not_null)
                   .group_by(col.copy()).order_by(exp.Ordered(this=exp.column("n"), desc=True), col.copy())
                   .limit(TOP_VALUES))
            rows = warehouse.query(sql.sql(dialect))[1]
            out[dim_id] = DimensionProfile(distinct, top_values=tuple((plain(v), int(c)) for v, c in rows))
    return out


def plain(value):
    """A value read from the warehouse as JSON and YAML hold it: a DECIMAL as an int or a float (a string when
    a float would change it), a date as ISO text, a numpy scalar as its Python value. Slices and answers
    carry such values; a value that enters SQL still becomes a literal (dptool.sql.literal) from it."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, Decimal):
        if not value.is_finite():
            return str(value)
        if value == value.to_integral_value():
            return int(value)
        as_float = float(value)
        return as_float if Decimal(repr(as_float)) == value else str(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if hasattr(value, "item") and type(value).__module__ == "numpy":
        return plain(value.item())
    return value


def _encoding(warehouse: Warehouse, table, col, not_null, name: str) -> str:
    rows = warehouse.query(exp.select(col.copy()).from_(table).where(not_null).limit(1).sql(warehouse.dialect))[1]
    sample = rows[0][0] if rows else None
    if sample is None or isinstance(sample, datetime | date):
        return "timestamp"
    if isinstance(sample, int) and 0 <= sample <= 991231:
        return "yymmdd"
    raise DptoolError(f"{name}: a temporal dimension must hold timestamps, dates or YYMMDD integers, not {sample!r}")


def _year_month(col: exp.Expression, encoding: str) -> tuple[exp.Expression, exp.Expression]:
    if encoding == "yymmdd":
        # Berka's dates: 19YY, as in the data's own documentation
        year = exp.Add(this=exp.Floor(this=exp.Div(this=col.copy(), expression=exp.Literal.number(10000))),
                       expression=exp.Literal.number(1900))
        month = exp.Mod(this=exp.Floor(this=exp.Div(this=col.copy(), expression=exp.Literal.number(100))),
                        expression=exp.Literal.number(100))
        return year, month
    return (exp.Extract(this=exp.var("year"), expression=col.copy()),
            exp.Extract(this=exp.var("month"), expression=col.copy()))


Month = tuple[int, int]  # (year, month)


def data_span(catalog: Catalog, metric: Metric, profiles: dict[str, DimensionProfile]) -> tuple[Month, Month] | None:
    """The months, first and last, in which every table the metric reads has data.

    A table's months run from the first to the last month of its temporal dimensions; a table without
    one (a lookup table) does not narrow the span. None when no table of the metric has a date; a first
    month after the last when the tables' dates do not overlap (no window fits).
    """
    first, last = None, None
    for table in metric.tables:
        months = [(y, m) for d in catalog.dimensions.values() if d.table == table and d.kind == "temporal"
                  for y, m, n in profiles[d.id].months if n > 0]
        if not months:
            continue
        first = max(first, min(months)) if first else min(months)
        last = min(last, max(months)) if last else max(months)
    return (first, last) if first else None


def unmatched_conditions(catalog: Catalog, warehouse: Warehouse, manifest: dict) -> list[str]:
    """A line for each `applies_when` value no row of its column holds (a typo such as `Brooklynn`): the rule's
    condition then matches nothing, and its tasks would ask about a value the data does not have."""
    dialect = warehouse.dialect
    macros = manifest.get("macros") or {}
    lines = []
    for _, rule in sorted(catalog.rules.items()):
        for column, value in sorted(rule.applies_when.items()):
            dims = [d for d in catalog.dimensions.values() if d.column == column
                    and catalog.tables[d.table].domain == rule.domain]
            if not dims:
                continue
            found, seen = False, []
            for dim in sorted(dims, key=lambda d: d.table):
                table = sqlglot.to_table(catalog.tables[dim.table].relation_name, dialect=dialect)
                text = exp.cast(sql_column(column, dim.quote), exp.DataType.build("text"))
                sql = exp.select(exp.func("count", exp.Star())).from_(table).where(text.eq(exp.Literal.string(value)))
                if warehouse.query(sql.sql(dialect))[1][0][0]:
                    found = True
                    break
                col = sql_column(column, dim.quote)
                top = exp.select(col.copy()).from_(table).where(col.copy().is_(exp.null()).not_()) \
                    .group_by(col.copy()).order_by(col.copy()).limit(6)
                seen += [str(plain(v)) for (v,) in warehouse.query(top.sql(dialect))[1]]
            if not found:
                node = macros.get(rule.unique_id) or {}
                path = (node.get("patch_path") or node.get("original_file_path") or "?").split("://")[-1]
                tables = ", ".join(f"{catalog.tables[d.table].name}.{column}" for d in dims)
                lines.append(f"warning: {path}: {rule.unique_id}: meta.dptool.rule.applies_when.{column}: {value!r} "
                             f"is in no row of {tables} (it holds {', '.join(repr(v) for v in seen[:5])}"
                             f"{', ...' if len(seen) > 5 else ''}); the "
                             f"rule's condition matches nothing: a typo?")
    return lines
