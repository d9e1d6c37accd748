"""Dimensions that are one-to-one in the data (`brand_id` and `brand_name`): one question, not one per name.

Two categorical columns of one table whose values pair one-to-one (as many distinct pairs as distinct values of
either) slice every metric alike: a question by each asks the same thing twice. Of each such set one is kept,
the same every run: a column whose name is not an identifier (`brand_name` before `brand_id`), then the first by
name. A column a rule's condition names is always kept (its rule is tested on it).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from dptool.generate.profile import DimensionProfile
from dptool.project.catalog import Catalog
from dptool.project.warehouse import Warehouse
from dptool.sql import column as sql_column

ID_SUFFIXES = ("_id", "_key", "_code", "_sk", "id")


def one_to_one(catalog: Catalog, warehouse: Warehouse, profiles: dict[str, DimensionProfile]) -> dict[str, str]:
    """Each dimension id left out -> the dimension id kept in its place."""
    named = {c for r in catalog.rules.values() for c in r.applies_when}
    by_table: dict[str, list] = {}
    for dim in sorted(catalog.dimensions.values(), key=lambda d: d.id):
        if dim.kind != "temporal" and (profiles.get(dim.id) or DimensionProfile(0)).distinct >= 2:
            by_table.setdefault(dim.table, []).append(dim)
    out: dict[str, str] = {}
    for table_id, dims in sorted(by_table.items()):
        table = sqlglot.to_table(catalog.tables[table_id].relation_name, dialect=warehouse.dialect)
        groups: list[list] = []
        for dim in dims:
            home = next((g for g in groups if _paired(warehouse, table, g[0], dim, profiles)), None)
            if home is None:
                groups.append([dim])
            else:
                home.append(dim)
        for group in groups:
            if len(group) < 2:
                continue
            kept = min(group, key=lambda d: (d.column.lower().endswith(ID_SUFFIXES), d.column))
            for dim in group:
                if dim is not kept and dim.column not in named:
                    out[dim.id] = kept.id
    return out


def _paired(warehouse: Warehouse, table, a, b, profiles: dict[str, DimensionProfile]) -> bool:
    """Whether two columns' values pair one-to-one (NULL counted as a value)."""
    if profiles[a.id].distinct != profiles[b.id].distinct:
        return False
    def distinct(*dims) -> exp.Expression:  # quoted as the project's columns are (dptool.sql.column)
        rows = exp.select(*(sql_column(d.column, d.quote) for d in dims)).distinct().from_(table.copy()).subquery("d")
        return exp.select(exp.func("count", exp.Star())).from_(rows).subquery()

    sql = exp.select(distinct(a, b), distinct(a), distinct(b))
    n_pairs, n_first, n_second = warehouse.query(sql.sql(warehouse.dialect))[1][0]
    return n_pairs == n_first == n_second


def note(catalog: Catalog, aliases: dict[str, str]) -> list[str]:
    """The terminal's line per kept dimension: which names it stands for."""
    kept: dict[str, list[str]] = {}
    for left, keep in sorted(aliases.items()):
        kept.setdefault(keep, []).append(catalog.dimensions[left].column)
    return [f"note: {', '.join(cols)} {'is' if len(cols) == 1 else 'are'} one-to-one with "
            f"{catalog.dimensions[keep].column} in the data: questions slice by {catalog.dimensions[keep].column} only"
            for keep, cols in sorted(kept.items())]
