"""Before instantiation: where in the data each skeleton's rules change its metric, month by month.

A rule changes an answer only inside its scope: a crisis adjustment in one region and one year, a
suppression of small groups, a grace period from a date on. A candidate drawn blind from the data
mostly lands outside it, and would be compiled and run only to be dropped. So dptool first compiles one
probe query per skeleton through dbt (`dptool.gold` grouped by the skeleton's dimension and the month;
all in one `dbt compile`, as the gold models are: dptool.project.batch; never built: nothing is left in
the warehouse), runs them on the target, and keeps the (month, value) cells where the rule-modified value
differs from the base. Instantiation then draws windows and slices from those cells. Probes only choose
candidates: every gold answer still comes from its gold model.
"""

from __future__ import annotations

import math
from contextlib import closing
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from operator import itemgetter

from dptool.generate.instantiate import gold_value_is_avg, period_expression
from dptool.generate.materialize import jinja_literal
from dptool.generate.profile import DimensionProfile, plain
from dptool.generate.sample import Skeleton
from dptool.project.batch import compile_texts
from dptool.project.catalog import Catalog
from dptool.project.dbt import Connection, DbtProject
from dptool.project.warehouse import Warehouse

PROBE_TAG = "dptool_probe"
HEADER = "-- written by `dptool generate` for one run; removed when the run has read it\n"
ALL = object()  # the value of a cell whose skeleton's dimension is the time itself: any slice


@dataclass
class Probe:
    """The cells of one skeleton where its rules change the metric: month -> changed dimension values."""

    by_month: dict[tuple[int, int] | None, set] = field(default_factory=dict)
    rows_by_month: dict[tuple[int, int] | None, set] = field(default_factory=dict)  # cells with a value
    value_is_avg: bool | None = None  # is the value after the rules avg(<measure>), as a significance test needs?

    def changed(self, months: set[tuple[int, int]] | None = None, values=None) -> bool:
        """Does a rule change a cell in these months (None: any) for one of these values (None: any)?"""
        return self._any(self.by_month, months, values)

    def has_value(self, months: set[tuple[int, int]] | None = None, values=None) -> bool:
        """Has the metric a value in these months for one of these values (a group a task can compare)?"""
        return self._any(self.rows_by_month, months, values)

    @staticmethod
    def _any(cells: dict, months, values) -> bool:
        for month, changed_values in cells.items():
            if months is not None and month is not None and month not in months:
                continue
            if values is None or ALL in changed_values or changed_values & set(values):
                return True
        return False


def probe_sql(skeleton: Skeleton, catalog: Catalog, profiles: dict[str, DimensionProfile], dialect: str) -> str:
    """The probe model: base and rule-modified values per month and dimension value."""
    metric = catalog.metrics[skeleton.metric]
    dim = catalog.dimensions[skeleton.dimension]
    temporal = next((d for d in catalog.dimensions_of(metric) if d.kind == "temporal"), None)
    args = [f"metric={jinja_literal(skeleton.metric)}",
            f"rules={jinja_literal(catalog.rules_argument(skeleton.metric, skeleton.rules))}"]
    group_by = [] if dim.kind == "temporal" else [dim.column]
    if temporal is not None:
        args.append(f"group_by={jinja_literal(group_by)}")
        args.append("shape='series'")
        period = period_expression(temporal.column, profiles[temporal.id].encoding, dialect, temporal.quote)
        args.append(f"period={period}")
    else:
        args.append(f"group_by={jinja_literal(group_by)}")
        args.append("shape='grouped'" if group_by else "shape='value'")
    config = "{{ config(materialized='view', tags=['" + PROBE_TAG + "']) }}\n"
    return HEADER + config + "{{ dptool.gold(" + ", ".join(args) + ") }}\n"


def probe(project: DbtProject, skeletons: list[Skeleton], catalog: Catalog, profiles: dict[str, DimensionProfile],
          connection: Connection, dialect: str) -> dict[str, Probe]:
    """A Probe per skeleton with rules, keyed by skeleton id; one `dbt compile`, one query per probe."""
    wanted = {s.id: s for s in skeletons if s.rules}
    if not wanted:
        return {}
    # named by number: a skeleton id can be longer than a name may be; one metric's probes side by side
    order = sorted(wanted.values(), key=lambda s: (s.metric, s.id))
    names = {f"probe_{i:04d}": s for i, s in enumerate(order, start=1)}
    compiled = compile_texts(project, {n: probe_sql(s, catalog, profiles, dialect) for n, s in names.items()})
    # a probe that does not compile or run: its candidates meet the same error as gold models
    runnable = [n for n in names if compiled[n].sql is not None]
    out = {}
    with Warehouse.of(connection) as warehouse, \
            closing(warehouse.query_shared(compiled[n].query for n in runnable)) as results:
        for name, result in zip(runnable, results, strict=True):
            if isinstance(result, Exception):
                continue
            skeleton = names[name]
            temporal = catalog.dimensions[skeleton.dimension].kind == "temporal"
            out[skeleton.id] = _cells(*result, temporal)
            out[skeleton.id].value_is_avg = gold_value_is_avg(compiled[name].own_sql or compiled[name].sql, dialect)
    return dict(sorted(out.items()))


def _cells(columns: list[str], rows: list[tuple], temporal_dimension: bool) -> Probe:
    # a probe returns a row per variant, month and value of the dimension: hundreds of thousands over a run, so
    # no object per row and the rows split by C code (itemgetter); months and values are converted once each
    variant, value = columns.index("variant"), columns.index("value")
    keys = [i for i, c in enumerate(columns) if c not in ("variant", "value")]
    key_of = itemgetter(*keys) if keys else (lambda row: ())
    value_of = itemgetter(value)

    def side(name: str) -> dict:  # key -> value of one variant's rows
        picked = [row for row in rows if row[variant] == name]
        return dict(zip(map(key_of, picked), map(value_of, picked), strict=True))

    base, gold = side("base"), side("gold")
    # a key is the one key column's value, or a tuple of them
    period = keys.index(columns.index("period")) if "period" in columns else None
    other = next((n for n, i in enumerate(keys) if n != period), None)
    month_of = (lambda key: None) if period is None else \
        (lambda key: key) if len(keys) == 1 else itemgetter(period)
    cell_of = (lambda key: ALL) if other is None or temporal_dimension else \
        (lambda key: key) if len(keys) == 1 else itemgetter(other)
    months: dict = {}
    cells: dict = {}
    out = Probe()
    for key in base.keys() | gold.keys():
        stamp, raw = month_of(key), cell_of(key)
        month = months[stamp] if stamp in months else months.setdefault(stamp, _month(stamp))
        # the value as the profile holds it
        cell = cells[raw] if raw in cells else cells.setdefault(raw, raw if raw is ALL else plain(raw))
        b, g = base.get(key), gold.get(key)
        if b is None and g is None:
            continue
        out.rows_by_month.setdefault(month, set()).add(cell)
        if b != g and _differ(b, g):  # equal values are no change: most cells of most probes
            out.by_month.setdefault(month, set()).add(cell)
    return out


def _differ(base, gold) -> bool:
    if base is None or gold is None:
        return (base is None) != (gold is None)
    try:
        a, b = float(base), float(gold)
    except (TypeError, ValueError):
        return base != gold
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) != math.isnan(b)
    return abs(a - b) > 1e-9 * max(1.0, abs(a), abs(b))


def _month(period) -> tuple[int, int] | None:
    if isinstance(period, datetime | date):
        return (period.year, period.month)
    if isinstance(period, int | float | Decimal):  # YYMM of a YYMMDD column: floor(date / 100)
        code = int(period)
        return (1900 + code // 100, code % 100)
    return None
