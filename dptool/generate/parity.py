"""MetricFlow as a second oracle: every metric dptool imports from the dbt semantic layer, computed by MetricFlow.

dptool translates a semantic metric into its own declaration (dptool.project.semantic) and computes it with its
own macros; MetricFlow, the semantic layer's engine, computes the same metric from the same definitions. Two
engines written by different people agreeing is the strongest proof of a translation. For each imported metric,
its rule-free value is computed both ways, overall, by month (when it has a period) and by up to two of its
dimensions: dptool's through `dptool.metric_query` (one `dbt compile` for all, as probes are), MetricFlow's
through its own engine reading target/semantic_manifest.json, both run on the target. A metric is equal when
every value of every slice is (a group one side lacks counts when the other's value there is empty: dptool keeps
a filtered metric's groups with no matching row, MetricFlow drops them); a difference is a warning naming the
metric, the slice, the group and both values. The metricflow package is optional (`pip install
'dptool[metricflow]'`; dbt-core 1.12 requires it): without it, nothing is checked and the card says so.
"""

from __future__ import annotations

import importlib.util
import logging
import math
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

from dptool.generate.instantiate import period_expression
from dptool.generate.materialize import jinja_literal
from dptool.project.batch import compile_texts
from dptool.project.catalog import Catalog
from dptool.project.dbt import Connection, DbtProject
from dptool.project.warehouse import Warehouse

MAX_DIMENSIONS = 2  # slices by dimension per metric, besides the overall value and the months
REL_TOL = 1e-9
SEMANTIC_MANIFEST = "semantic_manifest.json"
_ENGINES = {"duckdb": ("DUCKDB", "duckdb_renderer", "DuckDbSqlPlanRenderer"),
            "postgres": ("POSTGRES", "postgres", "PostgresSQLSqlPlanRenderer"),
            "redshift": ("REDSHIFT", "redshift", "RedshiftSqlPlanRenderer"),
            "snowflake": ("SNOWFLAKE", "snowflake", "SnowflakeSqlPlanRenderer"),
            "bigquery": ("BIGQUERY", "big_query", "BigQuerySqlPlanRenderer"),
            "databricks": ("DATABRICKS", "databricks", "DatabricksSqlPlanRenderer"),
            "trino": ("TRINO", "trino", "TrinoSqlPlanRenderer")}


@dataclass
class Slice:
    """One query of one metric, both ways."""

    metric: str  # dptool's id
    semantic: str  # the semantic layer's name
    name: str  # "overall", "by month", "by region"
    column: str | None  # dptool's group column (None overall)
    group_by: str | None  # MetricFlow's (`customer__region`, `metric_time__month`)
    differences: list[str] = field(default_factory=list)
    error: str = ""


@dataclass
class Parity:
    """What the check found: per metric, equal, different, or not compared (and why)."""

    slices: list[Slice] = field(default_factory=list)
    not_compared: dict[str, str] = field(default_factory=dict)  # metric -> why
    skipped: str = ""  # why nothing was checked

    @property
    def compared(self) -> list[str]:
        return sorted({s.metric for s in self.slices})

    @property
    def equal(self) -> list[str]:
        bad = {s.metric for s in self.slices if s.differences or s.error}
        return [m for m in self.compared if m not in bad]

    def warnings(self) -> list[str]:
        """One `warning:` line per slice whose values differ or that one engine could not compute."""
        out = []
        for s in self.slices:
            if s.error:
                out.append(f"warning: metric {s.metric} ({s.semantic}), {s.name}: not compared: {s.error}")
            for d in s.differences:
                out.append(f"warning: metric {s.metric} ({s.semantic}), {s.name}: {d}")
        return out

    def summary(self) -> str:
        if self.skipped:
            return f"MetricFlow parity: not checked ({self.skipped})"
        line = f"MetricFlow parity: {len(self.equal)} of {len(self.compared)} metrics equal"
        if self.not_compared:
            line += f" ({len(self.not_compared)} not compared)"
        return line

    def card_lines(self) -> list[str]:
        """The card's section: n of m, each metric's result, and what was not compared and why."""
        lines = ["## MetricFlow parity", "", f"- {self.summary().removeprefix('MetricFlow parity: ')}"]
        if self.skipped:
            return [*lines, ""]
        lines += ["- Each metric's rule-free value, computed by dptool's macros and by MetricFlow from the same "
                  "semantic-layer definitions, overall, by month and by up to two dimensions.", "",
                  "| metric | slices | result |", "| --- | --- | --- |"]
        for metric in self.compared:
            mine = [s for s in self.slices if s.metric == metric]
            bad = [s for s in mine if s.differences or s.error]
            result = "equal" if not bad else "differs: " + "; ".join(
                (s.differences[0] if s.differences else s.error) + f" ({s.name})" for s in bad[:2])
            lines.append(f"| {metric} | {', '.join(s.name for s in mine)} | {result} |")
        for metric, why in sorted(self.not_compared.items()):
            lines.append(f"| {metric} | | not compared: {why} |")
        return [*lines, ""]


def available() -> bool:
    """Whether the metricflow package is installed."""
    return importlib.util.find_spec("metricflow") is not None


def check_parity(project: DbtProject, catalog: Catalog, connection: Connection,
                 encodings: dict[str, str] | None = None) -> Parity:
    """Every imported semantic-layer metric's rule-free value, by dptool and by MetricFlow; see the module doc.

    `encodings` (temporal Dimension.id -> how its column holds a date) comes from the profile; timestamp if absent.
    """
    layer = catalog.semantic
    parity = Parity()
    metrics = sorted(getattr(layer, "metrics", {}).values(), key=lambda m: m.name)
    metrics = [m for m in metrics if m.name in catalog.metrics]
    if not metrics:
        parity.skipped = "no metric from the dbt semantic layer"
        return parity
    if not available():
        parity.skipped = "the metricflow package is not installed: pip install 'dbt-dptool[metricflow]'"
        return parity
    path = project.target_dir / SEMANTIC_MANIFEST
    if not path.is_file():
        parity.skipped = f"{path} is missing: dbt writes it at `dbt parse`"
        return parity
    engine = _engine(path, connection.adapter_type)
    if isinstance(engine, str):
        parity.skipped = engine
        return parity
    for m in metrics:
        if m.approximate:
            parity.not_compared[m.name] = ("MetricFlow computes its percentile approximately "
                                           "(use_approximate_percentile), dptool exactly")
            continue
        parity.slices += _slices(catalog, m)
    dialect = _dialect(connection)
    texts = {f"parity_{i:04d}": _dptool_text(catalog, s, encodings or {}, dialect)
             for i, s in enumerate(parity.slices, start=1)}
    compiled = compile_texts(project, texts)
    with Warehouse.of(connection) as warehouse:
        for name, s in zip(texts, parity.slices, strict=True):
            mf_sql = _metricflow_sql(engine, s)
            if isinstance(mf_sql, Exception):
                s.error = f"MetricFlow cannot compute it: {' '.join(str(mf_sql).split())[:300]}"
                continue
            if compiled[name].sql is None:
                s.error = f"dptool's query does not compile: {' '.join(str(compiled[name].error).split())[:300]}"
                continue
            try:
                mine = warehouse.query(compiled[name].sql)
                theirs = warehouse.query(mf_sql)
            except Exception as exc:  # a failing query is a finding, not a failed run
                s.error = " ".join(str(exc).split())[:300]
                continue
            s.differences = _compare(mine, theirs, s)
    return parity


def _slices(catalog: Catalog, m) -> list[Slice]:
    metric = catalog.metrics[m.name]
    out = [Slice(m.name, m.metric, "overall", None, None)]
    temporal = catalog.dimensions.get(metric.period)
    if temporal is not None and m.time_spec:
        out.append(Slice(m.name, m.metric, "by month", temporal.column, "metric_time__month"))
    dims = [d for d in catalog.dimensions_of(metric) if d.kind != "temporal" and d.column in m.group_bys]
    for d in dims[:MAX_DIMENSIONS]:
        out.append(Slice(m.name, m.metric, f"by {d.column}", d.column, m.group_bys[d.column]))
    return out


def _dptool_text(catalog: Catalog, s: Slice, encodings: dict[str, str], dialect: str) -> str:
    args = [f"metric={jinja_literal(s.metric)}", f"rules={jinja_literal(catalog.rules_argument(s.metric, []))}"]
    if s.group_by == "metric_time__month":
        period = catalog.metrics[s.metric].period
        args += ["shape='series'", f"period={period_expression(s.column, encodings.get(period, 'timestamp'), dialect)}"]
    elif s.column:
        args += [f"group_by={jinja_literal([s.column])}", "shape='grouped'"]
    return "{{ config(materialized='ephemeral') }}\n{{ dptool.metric_query(" + ", ".join(args) + ") }}\n"


def _engine(path: Path, adapter_type: str):
    """MetricFlow's engine over the project's semantic manifest, rendering SQL for the target's engine; a string
    says why there is none."""
    for name in ("metricflow", "metricflow_semantics", "metricflow_semantic_interfaces", "dbt_metricflow"):
        logging.getLogger(name).setLevel(logging.ERROR)  # its notes on the manifest are not dptool's output
    if adapter_type not in _ENGINES:
        return f"MetricFlow renders no SQL for a {adapter_type} target here"
    import importlib

    from metricflow.engine.metricflow_engine import MetricFlowEngine
    from metricflow.protocols.sql_client import SqlEngine
    from metricflow_semantics.model.dbt_manifest_parser import parse_manifest_from_dbt_generated_manifest
    from metricflow_semantics.model.semantic_manifest_lookup import SemanticManifestLookup

    engine_name, module, renderer = _ENGINES[adapter_type]
    renderer_class = getattr(importlib.import_module(f"metricflow.sql.render.{module}"), renderer)

    class _Dialect:
        """What MetricFlow's planner asks of a SQL client to write SQL (explain): the engine and its renderer.
        dptool runs the SQL itself, through the target's connection."""

        sql_engine_type = getattr(SqlEngine, engine_name)
        sql_plan_renderer = renderer_class()

        def render_bind_parameter_key(self, key: str) -> str:
            return f"${key}"

    try:
        manifest = parse_manifest_from_dbt_generated_manifest(path.read_text(encoding="utf-8"))
        return MetricFlowEngine(SemanticManifestLookup(manifest), _Dialect())
    except Exception as exc:  # MetricFlow's own validation of the manifest
        return f"MetricFlow cannot read {path}: {' '.join(str(exc).split())[:300]}"


def _metricflow_sql(engine, s: Slice):
    from metricflow.engine.metricflow_engine import MetricFlowQueryRequest

    try:
        request = MetricFlowQueryRequest.create(metric_names=[s.semantic],
                                                group_by_names=[s.group_by] if s.group_by else [])
        return engine.explain(request).sql_statement.sql
    except Exception as exc:
        return exc


def _dialect(connection: Connection) -> str:
    from dptool.sql import dialect_of

    return dialect_of(connection.adapter_type)


def _compare(mine: tuple[list[str], list[tuple]], theirs: tuple[list[str], list[tuple]], s: Slice) -> list[str]:
    """Differences between dptool's rows and MetricFlow's, aligned by their group."""
    names, rows = mine
    value = names.index("value")
    key = names.index("period") if s.group_by == "metric_time__month" else (names.index(s.column) if s.column else None)
    ours = {(_key(r[key]) if key is not None else None): r[value] for r in rows}
    mf_names, mf_rows = theirs
    mf_value = mf_names.index(s.semantic) if s.semantic in mf_names else len(mf_names) - 1
    mf_key = mf_names.index(s.group_by) if s.group_by in mf_names else None
    other = {(_key(r[mf_key]) if mf_key is not None else None): r[mf_value] for r in mf_rows}
    out = []
    for group in sorted(set(ours) | set(other), key=lambda g: (g is None, str(g))):
        a, b = ours.get(group), other.get(group)
        if _same(a, b):
            continue
        where = "" if group is None else f" for {group}"
        out.append(f"dptool {_shown(a, group in ours)}, MetricFlow {_shown(b, group in other)}{where}")
    return out


def _key(value):
    if isinstance(value, datetime):
        return value.date()
    return value


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    try:
        x, y = float(a), float(b)
    except (TypeError, ValueError):
        return a == b
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return abs(x - y) <= REL_TOL * max(1.0, abs(x), abs(y))


def _shown(value, present: bool) -> str:
    if not present:
        return "has no row"
    if isinstance(value, Decimal | float):
        return f"{float(value):.10g}"
    if isinstance(value, date):
        return value.isoformat()
    return repr(value) if isinstance(value, str) else str(value)
