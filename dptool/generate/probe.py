"""Before instantiation: where in the data each skeleton's rules change its metric, month by month.

A rule changes an answer only inside its scope: a crisis adjustment in one region and one year, a
suppression of small groups, a grace period from a date on. A candidate drawn blind from the data
mostly lands outside it, and dbt builds its gold model only to drop it. So dptool first compiles one
probe query per skeleton through dbt (`dptool.gold` grouped by the skeleton's dimension and the month;
compiled by `dbt compile`, never built: nothing is left in the warehouse), runs it, and keeps the (month, value)
cells where the rule-modified value differs from the base. Instantiation then draws windows and slices
from those cells. Probes only choose candidates: every gold answer still comes from its dbt model.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

from dptool.generate.instantiate import gold_value_is_avg, period_expression
from dptool.generate.materialize import jinja_literal
from dptool.generate.profile import DimensionProfile, plain
from dptool.generate.sample import Skeleton
from dptool.project.catalog import Catalog
from dptool.project.dbt import Connection, DbtProject
from dptool.project.warehouse import Warehouse

PROBE_DIR = Path("models") / "dptool_probe"
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
        args.append(f"period={period_expression(temporal.column, profiles[temporal.id].encoding, dialect)}")
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
    folder = project.project_dir / PROBE_DIR
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    names = {}
    try:
        for i, (skeleton_id, skeleton) in enumerate(sorted(wanted.items()), start=1):
            names[f"probe_{i:04d}"] = skeleton_id  # a skeleton id can be longer than a relation name may be
            (folder / f"probe_{i:04d}.sql").write_text(probe_sql(skeleton, catalog, profiles, dialect),
                                                       encoding="utf-8")
        results = project.run("compile", "--select", f"tag:{PROBE_TAG}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    out = {}
    with Warehouse.of(connection) as warehouse:  # after dbt: DuckDB allows one writer or many readers
        for r in sorted(results, key=lambda r: r.name):
            if r.name not in names or r.status != "success" or not r.compiled_code:
                continue  # a probe that does not compile: its candidates meet the same error in the gold run
            skeleton = wanted[names[r.name]]
            temporal = catalog.dimensions[skeleton.dimension].kind == "temporal"
            columns, rows = warehouse.query(r.compiled_code)
            out[skeleton.id] = _cells(columns, rows, temporal)
            out[skeleton.id].value_is_avg = gold_value_is_avg(r.compiled_code, dialect)
    return out


def _cells(columns: list[str], rows: list[tuple], temporal_dimension: bool) -> Probe:
    has_period = "period" in columns
    key_columns = [c for c in columns if c not in ("variant", "value")]
    values: dict[tuple, dict[str, object]] = {}
    for row in rows:
        record = dict(zip(columns, row, strict=True))
        key = tuple(record[c] for c in key_columns)
        values.setdefault(key, {})[record["variant"]] = record["value"]
    out = Probe()
    for key, variants in values.items():
        record = dict(zip(key_columns, key, strict=True))
        month = _month(record["period"]) if has_period else None
        others = [record[c] for c in key_columns if c != "period"]
        value = plain(others[0]) if others and not temporal_dimension else ALL  # as the profile holds it
        if variants.get("base") is not None or variants.get("gold") is not None:
            out.rows_by_month.setdefault(month, set()).add(value)
        if _differ(variants.get("base"), variants.get("gold")):
            out.by_month.setdefault(month, set()).add(value)
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
