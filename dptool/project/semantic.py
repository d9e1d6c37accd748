"""Metrics from the dbt semantic layer: the manifest's `semantic_models` and `metrics` -> catalog metrics.

A catalog metric is an aggregate over a model at the metric's row grain (DESIGN §2). For a metric of the
semantic layer, dptool writes that model itself: one ephemeral model per metric under
`models/dptool_semantic/` that selects the semantic model's node, left-joined through each foreign entity
to the semantic model where that entity is primary, and declares the metric in its properties
(`meta.dptool.metric`, exactly what a hand-written metric model declares). Gold models `ref` it like any
metric model, and because it is ephemeral their compiled SQL reads only the agent-visible tables.

What translates, and how (MetricFlow's semantics, one row of the semantic model's node per row):

- simple: the measure's aggregation over its expression (`sum`, `count`, `count_distinct`, `average`,
  `min`, `max`, `sum_boolean`, `median`, `percentile`); metric and measure filters go inside the
  aggregate (`sum(case when <filter> then amount end)`), so a ratio's numerator can filter while its
  denominator does not. Both manifest shapes: `type_params.measure` (a measure of a semantic model) and
  `type_params.metric_aggregation_params` (a metric that carries its own aggregation).
- ratio and derived: a composite, as MetricFlow computes them: each input is a catalog metric computed under
  its own filter (the input's and the metric's) and its own rules, and the value combines them per group:
  `1.0 * numerator / nullif(denominator, 0)`, or the derived metric's `expr` over its inputs' aliases. Inputs
  may live on different semantic models: each is computed over its own rows, and the composite is sliced by the
  columns every input has; its period is the date column every input's window reads, none where they differ.
- conversion: where the base events are one per entity (the entity is the base semantic model's primary key),
  the base rows, each with the conversion events that count on it (`dptool_conversions`).
- filters: `Dimension('entity__dim')`, `TimeDimension(...)`, `Entity(...)` resolve to the metric
  model's columns (dimensions one or two entities away joined); `Metric(...)` filters do not translate.
- dimensions: categorical dimensions that are plain columns, and each measure's agg_time_dimension (a column, or
  an expression that places a row in the day its one column does: `cast(col as date)`), become catalog
  dimensions of the semantic model's node (an agent-visible table), except one whose
  `config.meta.dptool.dimension` (or its node column's `meta.dptool.dimension`) is false; entities become joins.
- columns: those the node's relation has when the caller read them from the target (`relation_columns`); a
  column the YAML documents and the relation lacks is a warning.

Cumulative metrics, offsets, conversions with many base events per entity and semi-additive measures are no
aggregate over a fixed set of rows: each is skipped with why no task can ask for it, and the run goes on.
A model declared with `meta.dptool.metric` under the same name wins over the semantic metric.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import sqlglot
import yaml
from sqlglot import exp

from dptool.errors import DptoolError

GENERATED_DIR = "dptool_semantic"
HEADER = "-- written by `dptool generate` from the dbt semantic layer; do not edit (each run rewrites this folder)\n"
PROPERTIES = "_dptool_semantic.yml"
BASE = "dptool_base"  # the alias of the semantic model's node in a generated model
CONVERSIONS = "dptool_conversions"  # a conversion metric's column: the conversion events that count on the row
PRIMARY_LIKE = ("primary", "unique", "natural")
COUNTING = {"count", "count_distinct", "sum_boolean"}
METRIC_FORMATS = ("number", "percent", "currency")
DECL_KEYS = ("label", "value", "unit", "format", "formula", "tier", "grain", "period", "duration", "entity")
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"-?\d+(\.\d+)?")


class Untranslatable(Exception):
    """A semantic-layer metric that has no single aggregate over one row grain."""


@dataclass(frozen=True)
class SemanticModel:
    name: str
    node_id: str
    ref_call: str  # "ref('fct_invoices')", as the semantic model names its node
    relation_name: str
    table_name: str
    description: str
    documented: tuple[str, ...]  # the node's documented columns, in order
    column_docs: dict
    entities: dict  # name -> {"type", "expr"}
    dimensions: dict  # name -> {"type", "expr", "label", "meta"}
    measures: dict  # name -> the measure as the manifest has it
    default_time: str | None
    primary_entity: str | None
    domain: str
    file: str
    node_name: str = ""
    properties_file: str = ""  # the YAML file that documents the node's columns


@dataclass
class MetricModel:
    """A generated model: one semantic metric at its semantic model's row grain."""

    name: str  # the model's name, the catalog metric's id
    metric: str  # the semantic metric's name
    semantic_model: str
    ref_call: str
    joins: list[tuple[str, str, str, str]]  # (alias, ref call, base column, joined column)
    columns: list[tuple[str, str]]  # (SQL over the node and the joins, column name)
    decl: dict  # meta.dptool.metric
    description: str
    tables: tuple[str, ...]  # node unique_ids: the semantic model's and the joined ones
    components: tuple[str, ...] = ()  # a composite's inputs (catalog metric names), each once
    # a ratio's or derived metric's inputs: {metric (the semantic metric), alias (its name in `value`), where}
    inputs: list[dict] = field(default_factory=list)
    # column -> its name in a MetricFlow query's group by (`customer__region`): what dptool.project.parity asks for
    group_bys: dict[str, str] = field(default_factory=dict)
    time_column: str | None = None  # the column a task's window reads: the measure's agg_time_dimension's
    time_spec: str = ""  # the time dimension as the semantic layer names it (`order__ordered_on`)
    composite_columns: tuple[str, ...] | None = None  # a composite's: the columns every input has (None: unknown)
    conversion: dict | None = None  # a conversion metric's join of its conversion events (model_sql)
    approximate: bool = False  # MetricFlow computes it approximately (use_approximate_percentile)

    @property
    def column_names(self) -> tuple[str, ...]:
        """The columns a task may slice it by: the model's, or a composite's shared columns."""
        if self.inputs:
            return self.composite_columns or ()
        return tuple(n for _, n in self.columns)


@dataclass
class SemanticLayer:
    """What the manifest's semantic layer gives the catalog."""

    metrics: dict[str, MetricModel] = field(default_factory=dict)  # by model name
    skipped: dict[str, str] = field(default_factory=dict)  # semantic metric -> why it was skipped
    notes: list[str] = field(default_factory=list)
    models: dict[str, SemanticModel] = field(default_factory=dict)
    joins: list[tuple[str, str, str, str]] = field(default_factory=list)  # (from node, column, to node, column)
    dimensions: list[tuple[str, str, str, str]] = field(default_factory=list)  # (node, column, kind, label)
    declared: set[str] = field(default_factory=set)  # semantic metrics a dptool metric model of that name wins over
    warnings: list[str] = field(default_factory=list)  # what a user must fix or know (generate prints `warning: `)

    def dptool_id(self, name: str) -> str | None:
        """The catalog metric id of a semantic metric (or of a catalog metric id itself); None if neither."""
        if name in self.metrics or name in self.declared:
            return name
        return next((m.name for m in self.metrics.values() if m.metric == name), None)


def is_generated(node: dict) -> bool:
    """Whether a manifest node is one of the models this module writes."""
    path = (node.get("original_file_path") or "").replace("\\", "/")
    return f"/{GENERATED_DIR}/" in f"/{path}"


def read_layer(manifest: dict, project: str, relation_columns: dict[str, list[str]] | None = None) -> SemanticLayer:
    """Translate the manifest's semantic layer; never raises for an untranslatable metric (it is skipped).

    `relation_columns` (node unique_id -> the columns its relation has, as the warehouse says) makes each
    generated model read the columns the relation really has: a column the node's YAML documents and the relation
    lacks is one warning (file, model, column), not a broken metric. Without it, the documented columns are read.
    """
    layer = SemanticLayer()
    nodes = manifest.get("nodes", {})
    dialect = _dialect(manifest)
    for _, raw in sorted((manifest.get("semantic_models") or {}).items()):
        if (raw.get("config") or {}).get("enabled") is False:
            continue
        model, problem = _semantic_model(raw, nodes, project)
        if model is None:
            layer.notes.append(f"semantic model {raw.get('name')!r} is not used: {problem}")
            continue
        if relation_columns is not None and model.node_id in relation_columns:
            model = _with_relation_columns(model, relation_columns[model.node_id], layer.warnings)
        layer.models[model.name] = model
    metrics = {m["name"]: m for _, m in sorted((manifest.get("metrics") or {}).items())
               if (m.get("config") or {}).get("enabled", True) is not False}
    if not metrics and not layer.models:
        return layer
    owners = _entity_owners(layer.models)
    for model in layer.models.values():
        for _, joined, base_col, joined_col in _joins(model, layer.models, owners):
            layer.joins.append((model.node_id, base_col, layer.models[joined].node_id, joined_col))
        for time_dim in sorted(_agg_time_dimensions(model, metrics)):
            dim = model.dimensions.get(time_dim)
            if not dim or dim["type"] != "time" or _kind(dim) is False:
                continue
            column = time_column(dim["expr"], dialect)
            if column is None:
                layer.warnings.append(
                    f"{model.file}: semantic model {model.name!r}: time dimension {time_dim!r} is the expression "
                    f"{dim['expr']!r}, which reads no one column of {model.table_name!r} as a date: its metrics have "
                    "no period (their tasks read the whole history); write it as a column, or cast(column as date)")
                continue
            if (model.node_id, column, "temporal") not in {d[:3] for d in layer.dimensions}:
                layer.dimensions.append((model.node_id, column, "temporal", dim["label"]))
        for name, dim in model.dimensions.items():
            if dim["type"] == "categorical" and _PLAIN.fullmatch(dim["expr"]) and _kind(dim) is not False:
                kind = _kind(dim) or "categorical"
                if kind not in ("spatial", "categorical"):
                    raise DptoolError(f"{model.file}: semantic model {model.name!r}: dimensions.{name}.config.meta."
                                      f"dptool.dimension is {kind!r}; a categorical dimension may be spatial or "
                                      "categorical")
                layer.dimensions.append((model.node_id, dim["expr"], kind, dim["label"]))

    taken = {n.get("name"): n for n in nodes.values()
             if n.get("resource_type") in ("model", "seed", "snapshot") and not is_generated(n)}
    translator = _Translator(metrics, layer.models, owners, dialect)
    for name, metric in metrics.items():
        if metric.get("type") not in ("simple", "ratio", "derived", "conversion"):
            layer.skipped[name] = _why_not(metric)
            continue
        existing = taken.get(name)
        if existing is not None and "metric" in (_dptool(existing)):
            layer.skipped[name] = f"declared by the dptool metric model {existing.get('unique_id')}, which wins"
            layer.declared.add(name)
            continue
        model_name = name
        if existing is not None:
            model_name = f"{name}_metric"
            if model_name in taken:
                layer.skipped[name] = f"models named {name!r} and {model_name!r} exist; dptool has no name for it"
                continue
            layer.notes.append(f"metric {name!r} is the catalog metric {model_name!r} (a model named {name!r} exists)")
        try:
            if metric.get("type") == "conversion":
                layer.metrics[model_name] = translator.translate_conversion(metric, model_name)
            else:
                layer.metrics[model_name] = translator.translate(metric, model_name)
        except Untranslatable as exc:
            layer.skipped[name] = str(exc)
            continue
        approximate = layer.metrics[model_name].approximate
        if approximate:
            layer.notes.append(f"metric {name!r}: the semantic layer computes its percentile approximately "
                               "(use_approximate_percentile); dptool's gold is the exact percentile, and kb/metrics.md "
                               "says so")
    _resolve_inputs(layer)
    _composite_columns(layer)
    return layer


def _with_relation_columns(model: SemanticModel, columns: list[str], warnings: list[str]) -> SemanticModel:
    """The semantic model reading the columns its relation has; one warning per documented column it lacks."""
    have = {c.lower() for c in columns}
    for col in model.documented:
        if col.lower() not in have:
            warnings.append(f"{model.properties_file or model.file}: model {model.node_name!r} documents column "
                            f"{col!r}, which its relation {model.relation_name} does not have; the semantic layer's "
                            "metrics on it read the columns the relation has")
    spelled = {c.lower(): c for c in model.documented}
    real = tuple(spelled.get(c.lower(), c) for c in columns)
    docs = {c: model.column_docs.get(c, "") for c in real}
    return SemanticModel(**{**model.__dict__, "documented": real, "column_docs": docs})


def _composite_columns(layer: SemanticLayer) -> None:
    """A composite's columns: those every input has, without a date that places the rows of only some inputs in
    time (a window on it would filter the others by another date, or fail); its time column: the one column every
    input's window reads, if there is one (else its tasks read the whole history, and a note says why)."""
    by_metric = {m.metric: m for m in layer.metrics.values()}
    temporal = {(d[0], d[1]) for d in layer.dimensions if d[2] == "temporal"}
    done: set[str] = set()

    def resolve(m: MetricModel) -> None:
        if not m.inputs or m.name in done:
            return
        done.add(m.name)
        parts = []
        for item in m.inputs:
            part = by_metric.get(item["metric"])
            if part is None:  # a dptool metric model: the catalog computes the shared columns
                m.composite_columns = None
                return
            resolve(part)
            parts.append(part)
        times = {p.time_column for p in parts}
        m.time_column = next(iter(times)) if len(times) == 1 else None
        tables = {t for p in parts for t in p.tables}
        dates = {c for t, c in temporal if t in tables}
        first, *rest = [p.column_names for p in parts]
        m.composite_columns = tuple(c for c in first if all(c in r for r in rest)
                                    and (c not in dates or c == m.time_column))
        m.group_bys = {c: parts[0].group_bys[c] for c in m.composite_columns if c in parts[0].group_bys}
        m.tables = tuple(sorted(tables))
        if m.time_column:
            m.decl.setdefault("period", parts[0].decl.get("period", m.time_column))
        elif len(times) > 1:
            named = sorted({p.decl.get("period") or "no date" for p in parts})
            layer.notes.append(f"metric {m.metric!r}: its inputs place their rows in time by different dates "
                               f"({', '.join(named)}): it has no period, and its tasks read the whole history")

    for m in sorted(layer.metrics.values(), key=lambda x: x.name):
        resolve(m)


def _resolve_inputs(layer: SemanticLayer) -> None:
    """Point each composite's inputs at the catalog metrics (generated models) of its input metrics; a composite
    whose input was skipped is skipped too, with the input's reason."""
    changed = True
    while changed:
        changed = False
        # an input a dptool metric model declares is that catalog metric
        translated = {**{n: n for n in layer.declared}, **{m.metric: m.name for m in layer.metrics.values()}}
        for name, m in sorted(layer.metrics.items()):
            missing = [i["metric"] for i in m.inputs if i["metric"] not in translated]
            if missing:
                reason = layer.skipped.get(missing[0]) or "it is not translated"
                layer.skipped[m.metric] = f"its input {missing[0]!r} is skipped: {reason}"
                del layer.metrics[name]
                changed = True
    translated = {**{n: n for n in layer.declared}, **{m.metric: m.name for m in layer.metrics.values()}}
    for m in layer.metrics.values():
        if not m.inputs:
            continue
        components = []
        for item in m.inputs:
            entry = {"metric": translated[item["metric"]]}
            if item["alias"] != entry["metric"]:
                entry["alias"] = item["alias"]
            if item["where"]:
                entry["where"] = item["where"]
            components.append(entry if len(entry) > 1 else entry["metric"])
        m.decl["components"] = components
        m.components = tuple(dict.fromkeys(translated[i["metric"]] for i in m.inputs))


def _kind(dim: dict):
    """A dimension's `config.meta.dptool.dimension`: spatial, categorical, false (not a dimension), or None."""
    return (dim["meta"].get("dptool") or {}).get("dimension")


def _why_not(metric: dict) -> str:
    kind = metric.get("type")
    if kind == "cumulative":
        params = (metric.get("type_params") or {}).get("cumulative_type_params") or {}
        span = params.get("window") or (metric.get("type_params") or {}).get("window")
        grain = params.get("grain_to_date") or (metric.get("type_params") or {}).get("grain_to_date")
        if span:
            what, rows = f"a trailing window of {_window(span)}", f"the rows of the {_window(span)} up to that day"
        elif grain:
            what, rows = f"{grain}-to-date", f"the rows from the start of that day's {grain} to that day"
        else:
            what, rows = "all time so far", "every row up to that day"
        period_agg = str(params.get("period_agg") or "first").lower()
        return (f"cumulative metric ({what}): its value on a day aggregates {rows}, and over a longer period it is "
                f"the value of one day of it (period_agg: {period_agg}); a task's value is one aggregate over the rows "
                "of its own window (months to years), which is neither, so no task can ask for it")
    if kind == "conversion":
        params = (metric.get("type_params") or {}).get("conversion_type_params") or {}
        base = (params.get("base_measure") or {}).get("name")
        conv = (params.get("conversion_measure") or {}).get("name")
        return (f"conversion metric ({base} -> {conv} by {params.get('entity')} within "
                f"{_window(params.get('window')) or 'any time'}): it matches two event streams per entity, "
                "not one aggregate over rows")
    return f"metric type {kind!r} is not translatable"


def _window_parts(window) -> tuple[int, str] | None:
    """(count, granularity) of a window, as the manifest writes it ({count, granularity}) or as text."""
    if not window:
        return None
    if isinstance(window, dict):
        return int(window.get("count") or 1), str(window.get("granularity") or "day").lower().rstrip("s")
    parts = str(window).split()
    if len(parts) == 2 and parts[0].isdigit():
        return int(parts[0]), parts[1].lower().rstrip("s")
    raise Untranslatable(f"cannot read the window {window!r}")


def _window(window) -> str:
    if not window:
        return ""
    if isinstance(window, dict):
        count = window.get("count")
        return f"{count} {window.get('granularity')}{'' if count == 1 else 's'}"
    return str(window)


def _dialect(manifest: dict) -> str:
    from dptool.sql import dialect_of

    return dialect_of((manifest.get("metadata") or {}).get("adapter_type") or "duckdb")


def _dptool(node: dict) -> dict:
    meta = node.get("meta") or (node.get("config") or {}).get("meta") or {}
    value = meta.get("dptool") or {}
    return value if isinstance(value, dict) else {}


def _semantic_model(raw: dict, nodes: dict, project: str) -> tuple[SemanticModel | None, str]:
    depends = (raw.get("depends_on") or {}).get("nodes") or []
    node_id = next((d for d in depends if d in nodes), None)
    if node_id is None:
        return None, f"its model {raw.get('model')!r} is not in the manifest"
    node = nodes[node_id]
    relation = node.get("relation_name") or ((raw.get("node_relation") or {}).get("relation_name"))
    if not node.get("relation_name"):
        return None, f"its model {node.get('name')!r} is ephemeral (no table an agent could query)"

    def expr(item: dict) -> str:
        return str(item.get("expr") or item["name"]).strip()

    entities = {e["name"]: {"type": e.get("type"), "expr": expr(e)} for e in raw.get("entities") or []}
    dimensions = {}
    for d in raw.get("dimensions") or []:
        meta = (d.get("config") or {}).get("meta") or d.get("meta") or {}
        dimensions[d["name"]] = {"type": d.get("type"), "expr": expr(d),
                                 "label": str(d.get("label") or d["name"].replace("_", " ")),
                                 "meta": meta if isinstance(meta, dict) else {}}
    measures = {m["name"]: {**m, "expr": expr(m)} for m in raw.get("measures") or []}
    explicit = (_dptool(node).get("domain"))
    return SemanticModel(
        name=raw["name"],
        node_id=node_id,
        ref_call=str(raw.get("model") or f"ref('{node['name']}')"),
        relation_name=relation,
        table_name=node.get("alias") or node["name"],
        description=raw.get("description") or node.get("description") or "",
        documented=tuple(node.get("columns") or {}),
        column_docs={c: (v.get("description") or "") for c, v in (node.get("columns") or {}).items()},
        entities=entities,
        dimensions=dimensions,
        measures=measures,
        default_time=((raw.get("defaults") or {}).get("agg_time_dimension")),
        primary_entity=raw.get("primary_entity") or next(
            (n for n, e in entities.items() if e["type"] == "primary"), None),
        domain=str(explicit) if explicit else project,
        file=raw.get("original_file_path") or "",
        node_name=node.get("name") or "",
        properties_file=(node.get("patch_path") or "").split("://")[-1],
    ), ""


def _agg_time_dimensions(model: SemanticModel, metrics: dict | None = None) -> set[str]:
    """The time dimensions that place the model's measures (and, in dbt 1.12's spec, its metrics) in time."""
    found = {m.get("agg_time_dimension") or model.default_time for m in model.measures.values()}
    for metric in (metrics or {}).values():
        params = (metric.get("type_params") or {}).get("metric_aggregation_params") or {}
        if params.get("semantic_model") == model.name:
            found.add(params.get("agg_time_dimension") or model.default_time)
    if model.default_time:
        found.add(model.default_time)
    return {f for f in found if f}


_DAY_CASTS = (exp.DataType.Type.DATE, exp.DataType.Type.TIMESTAMP, exp.DataType.Type.DATETIME,
              exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMPNTZ, exp.DataType.Type.TIMESTAMPLTZ)


def time_column(expr: str, dialect: str) -> str | None:
    """The column a time dimension reads, when its expression places each row in the same day as that column
    does: the column itself, `cast(col as date)` (or a timestamp type), `col::date`, `date(col)`,
    `date_trunc('day', col)`. A window [start, end) of whole days on the column keeps exactly the rows the
    expression keeps in it. None for any other expression."""
    if _PLAIN.fullmatch(expr):
        return expr
    try:
        tree = sqlglot.parse_one(expr, read=dialect)
    except sqlglot.errors.SqlglotError:
        return None
    inner = None
    if (isinstance(tree, exp.Cast | exp.TryCast) and tree.to.this in _DAY_CASTS) \
            or isinstance(tree, exp.TsOrDsToDate | exp.Date):
        inner = tree.this
    elif isinstance(tree, exp.Anonymous) and str(tree.this).lower() == "date" and len(tree.expressions) == 1:
        inner = tree.expressions[0]
    elif isinstance(tree, exp.DateTrunc | exp.TimestampTrunc | exp.TimeTrunc):
        unit = tree.args.get("unit")
        if unit is not None and unit.name.lower() == "day":
            inner = tree.this
    if isinstance(inner, exp.Column) and not inner.table and _PLAIN.fullmatch(inner.name):
        return inner.name
    return None


def _entity_owners(models: dict[str, SemanticModel]) -> dict[str, list[str]]:
    """entity -> the semantic models where it is primary (or unique, or natural): where a join lands."""
    owners: dict[str, list[str]] = {}
    for name, model in sorted(models.items()):
        for entity, spec in model.entities.items():
            if spec["type"] in PRIMARY_LIKE:
                owners.setdefault(entity, []).append(name)
    return owners


def _joins(model: SemanticModel, models: dict, owners: dict) -> list[tuple[str, str, str, str]]:
    """(alias, joined semantic model, base column, joined column) for each foreign entity that resolves."""
    out = []
    for entity, spec in model.entities.items():
        if spec["type"] != "foreign" or not _PLAIN.fullmatch(spec["expr"]):
            continue
        target = next((o for o in owners.get(entity, []) if o != model.name), None)
        if target is None:
            continue
        key = models[target].entities[entity]["expr"]
        if not _PLAIN.fullmatch(key) or _join_alias(entity) in (BASE, "dptool_conversion"):
            continue
        out.append((entity, target, spec["expr"], key))
    return out


def _input_names(metric: dict) -> list[str]:
    params = metric.get("type_params") or {}
    names = [(params.get(k) or {}).get("name") for k in ("numerator", "denominator")]
    names += [m.get("name") for m in params.get("metrics") or []]
    return [n for n in names if n]


def _item(item) -> dict:
    """A ratio's numerator or denominator, or a derived metric's input, as a mapping with at least `name`."""
    return {"name": item} if isinstance(item, str) else dict(item or {})


def _templates(filter_: dict | None) -> list[str]:
    if not filter_:
        return []
    return [f["where_sql_template"] for f in filter_.get("where_filters") or [] if f.get("where_sql_template")]


@dataclass
class _Piece:
    sql: str
    model: str
    aggs: frozenset
    formula: str
    time_dim: str | None


class _Shape:
    """The columns of one generated model: the node's, its dimensions' and measures', and joined dimensions."""

    def __init__(self, model: SemanticModel, models: dict, owners: dict, dialect: str, time_dim: str | None):
        self.model, self.models, self.dialect, self.owners = model, models, dialect, owners
        self.columns: list[tuple[str, str]] = []
        # joined models by entity path (`customer`, `order__customer`); in SQL each is dptool_<path> (`order` is a
        # keyword)
        hops = _joins(model, models, owners)
        self.joins = [(_join_alias(alias), models[t].ref_call, b, j) for alias, t, b, j in hops]
        self.joined = {alias: models[t] for alias, t, _, _ in _joins(model, models, owners)}
        # the dates of the model's other measures stay out: a window must read this measure's date alone
        own = model.dimensions.get(time_dim or "")
        own_column = time_column(own["expr"], dialect) if own and own["type"] == "time" else None
        other_times = {time_column(d["expr"], dialect) or d["expr"] for n, d in model.dimensions.items()
                       if d["type"] == "time" and n in _agg_time_dimensions(model) and n != time_dim} - {own_column}
        self.time_column = own_column
        self.group_bys: dict[str, str] = {}
        for col in model.documented:
            if col not in other_times and _PLAIN.fullmatch(col):
                self.add(f"{BASE}.{col}", col)
        for spec in model.entities.values():
            if _PLAIN.fullmatch(spec["expr"]):
                self.add(f"{BASE}.{spec['expr']}", spec["expr"])
        for name, dim in model.dimensions.items():
            if dim["type"] == "time" and name != time_dim:
                continue
            if _PLAIN.fullmatch(dim["expr"]):
                self.add(f"{BASE}.{dim['expr']}", dim["expr"])
            else:
                sql = self.qualify(dim["expr"], BASE)
                if sql is not None:
                    self.add(sql, name)
        entity = model.primary_entity
        for name, dim in model.dimensions.items():
            if dim["type"] == "categorical" and _PLAIN.fullmatch(dim["expr"]) and entity:
                self.group_bys.setdefault(dim["expr"], f"{entity}__{name}")
        for alias, joined in self.joined.items():
            for name, dim in joined.dimensions.items():
                if dim["type"] == "categorical" and _PLAIN.fullmatch(dim["expr"]) \
                        and self.add(f"{_join_alias(alias)}.{dim['expr']}", dim["expr"]) == dim["expr"]:
                    self.group_bys.setdefault(dim["expr"], f"{alias}__{name}")

    @property
    def names(self) -> set[str]:
        return {n for _, n in self.columns}

    def add(self, sql: str, name: str) -> str | None:
        """Expose `sql` as column `name` (once); returns the column that holds it, None if the name is taken."""
        for s, n in self.columns:
            if s == sql:
                return n
        if name in self.names:
            return None
        self.columns.append((sql, name))
        return name

    def qualify(self, expr: str, alias: str) -> str | None:
        """An expression over one relation's columns, with each column qualified by the relation's alias."""
        try:
            tree = sqlglot.parse_one(expr, read=self.dialect)
        except sqlglot.errors.SqlglotError:
            return None
        for col in list(tree.find_all(exp.Column)):
            if not col.table:
                col.set("table", exp.to_identifier(alias))
        return tree.sql(self.dialect)

    def expose(self, sql: str, preferred: str, fallback: str) -> str:
        name = self.add(sql, preferred)
        if name is None:
            name = self.add(sql, fallback)
        if name is None:
            raise Untranslatable(f"no free column name for {sql!r}")
        return name

    def measure_column(self, measure_name: str, expr: str) -> str:
        """The SQL a measure aggregates: a column of the model, or a literal."""
        if _NUMBER.fullmatch(expr):
            return expr
        if _PLAIN.fullmatch(expr):
            return self.expose(f"{BASE}.{expr}", expr, f"{self.model.name}__{expr}")
        sql = self.qualify(expr, BASE)
        if sql is None:
            raise Untranslatable(f"measure {measure_name!r}: cannot read its expression {expr!r}")
        return self.expose(sql, measure_name, f"{self.model.name}__{measure_name}")

    def dimension(self, reference: str, entity_path=(), time_dim: str | None = None) -> str:
        """The column of a filter's `Dimension('entity__name')`."""
        parts = [*entity_path, *reference.split("__")]
        name, path = parts[-1], parts[:-1]
        if name == "metric_time":
            if not time_dim:
                raise Untranslatable("the filter reads metric_time, and the measure has no time dimension")
            name, path = time_dim, []
        base_entities = set(self.model.entities) | ({self.model.primary_entity} if self.model.primary_entity else set())
        if not path or (len(path) == 1 and path[0] in base_entities and path[0] not in self.joined):
            if name in self.model.dimensions:
                return self._dim(self.model, BASE, name)
            if path:
                raise Untranslatable(f"the filter names {reference!r}: semantic model {self.model.name!r} has no "
                                     f"dimension {name!r}")
            hits = [a for a, m in self.joined.items() if name in m.dimensions]
            if len(hits) == 1:
                return self._dim(self.joined[hits[0]], hits[0], name)
            raise Untranslatable(f"the filter names dimension {reference!r}, which no joined semantic model has")
        if len(path) == 1 and path[0] in self.joined:
            joined = self.joined[path[0]]
            if name in joined.dimensions:
                return self._dim(joined, path[0], name)
            raise Untranslatable(f"the filter names {reference!r}: semantic model {joined.name!r} has no dimension "
                                 f"{name!r}")
        if len(path) == 2 and path[0] in self.joined:
            alias = self._hop(path[0], path[1])
            if alias is not None and name in self.joined[alias].dimensions:
                return self._dim(self.joined[alias], alias, name)
        raise Untranslatable(f"the filter names {reference!r}: only dimensions of the semantic model and of those "
                             "one or two entities away (each a foreign entity to where it is primary) translate")

    def _hop(self, first: str, entity: str) -> str | None:
        """Join the semantic model that `entity`, a foreign entity of the joined model `first`, is primary in: many
        rows to one, so the rows stay the metric's; the alias of that join (`order__customer`), None if none."""
        alias = f"{first}__{entity}"
        if alias in self.joined:
            return alias
        via = self.joined[first]
        spec = via.entities.get(entity) or {}
        target = next((o for o in self.owners.get(entity, []) if o != via.name), None)
        if spec.get("type") != "foreign" or target is None or not _PLAIN.fullmatch(spec.get("expr") or ""):
            return None
        key = self.models[target].entities[entity]["expr"]
        if not _PLAIN.fullmatch(key):
            return None
        self.joins.append((_join_alias(alias), self.models[target].ref_call, f"{_join_alias(first)}.{spec['expr']}",
                           key))
        self.joined[alias] = self.models[target]
        return alias

    def _dim(self, model: SemanticModel, alias: str, name: str) -> str:
        dim = model.dimensions[name]
        table = alias if alias == BASE else _join_alias(alias)
        if _PLAIN.fullmatch(dim["expr"]):
            sql = f"{table}.{dim['expr']}"
            preferred = dim["expr"] if alias == BASE else f"{alias}__{name}"
        else:
            sql = self.qualify(dim["expr"], table)
            if sql is None:
                raise Untranslatable(f"dimension {name!r}: cannot read its expression {dim['expr']!r}")
            preferred = name if alias == BASE else f"{alias}__{name}"
        return self.expose(sql, preferred, f"{alias}__{name}")

    def entity(self, reference: str) -> str:
        name = reference.split("__")[-1]
        if name in self.model.entities and _PLAIN.fullmatch(self.model.entities[name]["expr"]):
            expr = self.model.entities[name]["expr"]
            return self.expose(f"{BASE}.{expr}", expr, f"{self.model.name}__{name}")
        raise Untranslatable(f"the filter names entity {reference!r}, which semantic model "
                             f"{self.model.name!r} does not have")


def _join_alias(path: str) -> str:
    """The SQL alias of a joined semantic model in a generated model, from its entity path."""
    return f"dptool_{path}"


class _Ref:
    """What `{{ Dimension('x') }}` renders to in a filter: a column, with MetricFlow's chained methods."""

    def __init__(self, column: str, dialect: str):
        self.column, self.dialect = column, dialect

    def grain(self, granularity: str) -> _Ref:
        if str(granularity).lower() in ("day", ""):
            return self
        return _Ref(f"date_trunc('{str(granularity).lower()}', {self.column})", self.dialect)

    def date_part(self, part: str) -> _Ref:
        return _Ref(exp.Extract(this=exp.var(str(part).upper()), expression=sqlglot.parse_one(self.column))
                    .sql(self.dialect), self.dialect)

    def descending(self, _=True) -> _Ref:
        return self

    def __str__(self) -> str:
        return self.column


class _Translator:
    def __init__(self, metrics: dict, models: dict, owners: dict, dialect: str):
        self.metrics, self.models, self.owners, self.dialect = metrics, models, owners, dialect

    def translate(self, metric: dict, model_name: str) -> MetricModel:
        name = metric["name"]
        home = self._home(metric, set())
        model = self.models[home[0]]
        shape = _Shape(model, self.models, self.owners, self.dialect, home[1])
        piece = self._piece(name, [], shape, set())
        decl = self._declaration(metric, piece, model)
        inputs: list[dict] = []
        if metric.get("type") in ("ratio", "derived"):
            # each input is computed over its own semantic model, as MetricFlow does; the composite joins them on the
            # task's groups (the columns every input has: _composite_columns)
            inputs, decl["value"] = self._composite(metric)
        description = metric.get("description") or ""
        key = model.entities.get(model.primary_entity or "") or {}
        if not inputs and key.get("expr") in {n for _, n in shape.columns}:
            decl["entity"] = key["expr"]  # what the minimum support counts: the semantic model's primary entity
        return MetricModel(
            name=model_name, metric=name, semantic_model=model.name, ref_call=model.ref_call, joins=shape.joins,
            columns=[] if inputs else shape.columns, decl=decl,
            description=(f"{decl['label']} — from the dbt semantic layer (metric `{name}`, semantic model "
                         f"`{model.name}`)." + (f" {description.strip()}" if description.strip() else "")),
            tables=tuple(sorted({model.node_id, *(m.node_id for m in shape.joined.values())})),
            inputs=inputs, group_bys=dict(shape.group_bys), time_column=shape.time_column,
            time_spec=f"{model.primary_entity}__{home[1]}" if model.primary_entity and home[1] else "",
            approximate="approximate" in piece.aggs,
        )

    def translate_conversion(self, metric: dict, model_name: str) -> MetricModel:
        """A conversion metric whose base events are one per entity (the base measure's semantic model has the
        entity as its primary key): MetricFlow counts each conversion event on the latest base event of its entity
        before it within the window, and with one base event per entity that is the entity's own row whatever the
        question's window and filters keep. The model is at the base events' grain, each row with the conversions
        that count on it: `dptool_conversions`, summed over the rows of a task like any measure."""
        name = metric["name"]
        params = (metric.get("type_params") or {}).get("conversion_type_params") or {}
        entity = str(params.get("entity") or "")
        base_model, base = self._conversion_input(params, "base")
        conv_model, conv = self._conversion_input(params, "conversion")
        window = _window_parts(params.get("window"))
        what = (f"conversion metric ({base['name']} -> {conv['name']} by {entity} within "
                f"{_window(params.get('window')) or 'any time'})")
        base_entity = base_model.entities.get(entity) or {}
        if base_entity.get("type") not in PRIMARY_LIKE:
            raise Untranslatable(
                f"{what}: its base events are not one per {entity} (semantic model {base_model.name!r} is not at "
                f"the grain of {entity!r}), and MetricFlow counts each conversion on the latest base event before it "
                "that the question's window and filters keep: which row a conversion counts on depends on the "
                "question, so no fixed set of rows gives one aggregate")
        if _templates(metric.get("filter")) or params.get("constant_properties") or base.get("filter") \
                or conv.get("filter"):
            raise Untranslatable(f"{what}: a filter or constant_properties: MetricFlow applies them to the joined "
                                 "events, which dptool does not translate")
        conv_entity = conv_model.entities.get(entity) or {}
        if not _PLAIN.fullmatch(base_entity.get("expr") or "") or not _PLAIN.fullmatch(conv_entity.get("expr") or ""):
            raise Untranslatable(f"{what}: entity {entity!r} is no column of both semantic models")
        conv_agg = str(conv.get("agg") or "").lower()
        if conv_agg not in ("count", "sum", "sum_boolean") and not (
                conv_agg == "count_distinct" and conv["expr"] == conv_entity["expr"]):
            raise Untranslatable(f"{what}: its conversion measure aggregates with {conv_agg} of {conv['expr']!r}, "
                                 "which does not add up over the base events")
        base_time = base.get("agg_time_dimension") or base_model.default_time
        conv_time = conv.get("agg_time_dimension") or conv_model.default_time
        times = [(m.dimensions.get(t or "") or {}).get("expr") for m, t in ((base_model, base_time),
                                                                           (conv_model, conv_time))]
        if not all(times):
            raise Untranslatable(f"{what}: base or conversion events have no time dimension")
        shape = _Shape(base_model, self.models, self.owners, self.dialect, base_time)
        base_column = shape.measure_column(base["name"], base["expr"])
        base_sql = _aggregate(str(base.get("agg") or "").lower(), base_column, [], base.get("agg_params") or {})
        if base_sql is None:
            raise Untranslatable(f"{what}: its base measure's aggregation {base.get('agg')!r} is not translatable")
        if shape.add("coalesce(dptool_conversion.dptool_conversions, 0)", CONVERSIONS) != CONVERSIONS:
            raise Untranslatable(f"{what}: semantic model {base_model.name!r} has a column named {CONVERSIONS}")
        conv_expr = conv["expr"] if not _PLAIN.fullmatch(conv["expr"]) else f"dptool_c.{conv['expr']}"
        if not _PLAIN.fullmatch(conv["expr"]):
            conv_expr = _Shape(conv_model, self.models, self.owners, self.dialect, conv_time).qualify(
                conv["expr"], "dptool_c")
        per_event = {"count": f"count({conv_expr})", "sum": f"sum({conv_expr})",
                     "sum_boolean": f"sum(case when {conv_expr} then 1 else 0 end)",
                     "count_distinct": f"count(distinct {conv_expr})"}[conv_agg]
        calculation = str(params.get("calculation") or "conversion_rate").lower()
        if calculation == "conversion_rate":
            value = f"1.0 * sum({CONVERSIONS}) / nullif({base_sql}, 0)"
            formula = (f"({_spoken(conv_agg, conv['expr'], {})} of {conv_model.name.replace('_', ' ')} within "
                       f"{_window(params.get('window')) or 'any time'} after each {entity}'s base event) / "
                       f"({_spoken(str(base.get('agg')).lower(), base['expr'], {})} over "
                       f"{base_model.name.replace('_', ' ')})")
        elif calculation == "conversions":
            value = f"sum({CONVERSIONS})"
            formula = (f"{_spoken(conv_agg, conv['expr'], {})} of {conv_model.name.replace('_', ' ')} within "
                       f"{_window(params.get('window')) or 'any time'} after each {entity}'s base event")
        else:
            raise Untranslatable(f"{what}: calculation {calculation!r} is not translatable")
        piece = _Piece(value, base_model.name, frozenset({"conversion"}), formula, base_time)
        decl = self._declaration(metric, piece, base_model)
        if calculation == "conversion_rate" and "format" not in (_dptool(metric).get("metric") or {}):
            decl.update(format="percent", unit="share")
        decl["tier"] = "L2"
        conversion = {"base_ref": base_model.ref_call, "conversion_ref": conv_model.ref_call,
                      "base_entity": base_entity["expr"], "conversion_entity": conv_entity["expr"],
                      "base_time": shape.qualify(times[0], "dptool_b") if not _PLAIN.fullmatch(times[0])
                      else f"dptool_b.{times[0]}",
                      "conversion_time": _Shape(conv_model, self.models, self.owners, self.dialect, conv_time)
                      .qualify(times[1], "dptool_c") if not _PLAIN.fullmatch(times[1]) else f"dptool_c.{times[1]}",
                      "window": window, "per_event": per_event}
        description = metric.get("description") or ""
        return MetricModel(
            name=model_name, metric=name, semantic_model=base_model.name, ref_call=base_model.ref_call,
            joins=shape.joins, columns=shape.columns, decl=decl,
            description=(f"{decl['label']} — from the dbt semantic layer (conversion metric `{name}`, semantic models "
                         f"`{base_model.name}` and `{conv_model.name}`)."
                         + (f" {description.strip()}" if description.strip() else "")),
            tables=tuple(sorted({base_model.node_id, conv_model.node_id,
                                 *(m.node_id for m in shape.joined.values())})),
            group_bys=dict(shape.group_bys), time_column=shape.time_column,
            time_spec=f"{base_model.primary_entity}__{base_time}" if base_model.primary_entity else "",
            conversion=conversion,
        )

    def _conversion_input(self, params: dict, role: str) -> tuple[SemanticModel, dict]:
        """(semantic model, measure) of a conversion metric's base or conversion events: a measure (the legacy spec)
        or a simple metric (dbt 1.12's `base_metric` / `conversion_metric`)."""
        item = params.get(f"{role}_measure") or params.get(f"{role}_metric")
        item = _item(item)
        name = item.get("name")
        if not name:
            raise Untranslatable(f"conversion metric: no {role} measure")
        if params.get(f"{role}_measure"):
            for model in self.models.values():
                if name in model.measures:
                    return model, {**model.measures[name], **{k: v for k, v in item.items() if k == "filter" and v}}
            raise Untranslatable(f"conversion metric: measure {name!r} is in no usable semantic model")
        metric = self.metrics.get(name)
        if metric is None or metric.get("type") != "simple":
            raise Untranslatable(f"conversion metric: its {role} metric {name!r} is not a simple metric")
        model, measure = self._measure(metric)
        return model, {**measure, "filter": item.get("filter") or metric.get("filter")}

    def _composite(self, metric: dict) -> tuple[list[dict], str]:
        """A ratio's or derived metric's inputs ({metric, alias, where}) and its value over their aliases."""
        params = metric.get("type_params") or {}
        shared = _templates(metric.get("filter"))
        if metric.get("type") == "ratio":
            items = [_item(params.get("numerator")), _item(params.get("denominator"))]
            aliases = [i.get("alias") or i.get("name") for i in items]
            if aliases[0] == aliases[1]:
                aliases = [f"{aliases[0]}_numerator", f"{aliases[1]}_denominator"]
            value = f"1.0 * {aliases[0]} / nullif({aliases[1]}, 0)"
        else:
            items = [_item(i) for i in params.get("metrics") or []]
            aliases = [i.get("alias") or i.get("name") for i in items]
            value = str(params.get("expr") or aliases[0])
        inputs = []
        for item, alias in zip(items, aliases, strict=True):
            where = [self._input_filter(item["name"], t) for t in [*_templates(item.get("filter")), *shared]]
            inputs.append({"metric": item["name"], "alias": alias, "where": where})
        return inputs, value

    def _input_filter(self, name: str, template: str) -> str:
        """A filter of a composite's input, over the columns of the input's own model."""
        model_name, time_dim = self._home(self.metrics[name], set())
        shape = _Shape(self.models[model_name], self.models, self.owners, self.dialect, time_dim)
        before = shape.names
        sql = self._render(template, shape, time_dim)
        if shape.names != before:
            raise Untranslatable(f"the filter {template!r} of input {name!r} reads "
                                 f"{sorted(shape.names - before)[0]!r}, which the input's own model does not have")
        return sql

    def _home(self, metric: dict, seen: set) -> tuple[str, str | None]:
        """(semantic model, agg time dimension) of the metric's first measure."""
        name = metric["name"]
        if name in seen:
            raise Untranslatable(f"metric {name!r} refers to itself")
        seen = seen | {name}
        kind = metric.get("type")
        if kind == "simple":
            model, measure = self._measure(metric)
            return model.name, measure.get("agg_time_dimension") or model.default_time
        if kind not in ("ratio", "derived"):
            raise Untranslatable(f"its input {name!r} is a {kind} metric: {_why_not(metric)}")
        inputs = _input_names(metric)
        if not inputs:
            raise Untranslatable(f"metric {name!r} names no input metrics")
        first = self.metrics.get(inputs[0])
        if first is None:
            raise Untranslatable(f"input metric {inputs[0]!r} is not defined")
        return self._home(first, seen)

    def _measure(self, metric: dict) -> tuple[SemanticModel, dict]:
        params = metric.get("type_params") or {}
        agg_params = params.get("metric_aggregation_params")
        if agg_params:
            model = self.models.get(agg_params.get("semantic_model"))
            if model is None:
                raise Untranslatable(f"semantic model {agg_params.get('semantic_model')!r} is not usable")
            return model, {"name": metric["name"], "agg": agg_params.get("agg"),
                           "expr": str(agg_params.get("expr") or params.get("expr") or metric["name"]).strip(),
                           "agg_params": agg_params.get("agg_params"),
                           "non_additive_dimension": agg_params.get("non_additive_dimension"),
                           "agg_time_dimension": agg_params.get("agg_time_dimension") or model.default_time}
        measure_input = params.get("measure") or {}
        measure_name = measure_input.get("name")
        if not measure_name:
            raise Untranslatable("a simple metric with neither type_params.measure nor metric_aggregation_params")
        for model in self.models.values():
            if measure_name in model.measures:
                return model, model.measures[measure_name]
        raise Untranslatable(f"measure {measure_name!r} is in no usable semantic model")

    def _piece(self, name: str, filters: list[str], shape: _Shape, seen: set) -> _Piece:
        metric = self.metrics.get(name)
        if metric is None:
            raise Untranslatable(f"input metric {name!r} is not defined")
        if name in seen:
            raise Untranslatable(f"metric {name!r} refers to itself")
        seen = seen | {name}
        kind, params = metric.get("type"), metric.get("type_params") or {}
        filters = [*_templates(metric.get("filter")), *filters]
        if kind == "simple":
            return self._simple(metric, filters, shape)
        if kind == "ratio":
            num = self._input(params.get("numerator"), filters, shape, seen, "numerator")
            den = self._input(params.get("denominator"), filters, shape, seen, "denominator")
            aggs = num.aggs | den.aggs
            return _Piece(f"1.0 * ({num.sql}) / nullif({den.sql}, 0)", num.model, aggs,
                          f"({num.formula}) / ({den.formula})", num.time_dim)
        if kind == "derived":
            pieces, first = {}, None
            for item in params.get("metrics") or []:
                piece = self._input(item, filters, shape, seen, "input")
                if first is None:
                    first = piece
                pieces[item.get("alias") or item["name"]] = piece
            if not pieces:
                raise Untranslatable(f"derived metric {name!r} names no input metrics")
            expr = params.get("expr") or next(iter(pieces))
            sql = _substitute(expr, {k: f"({p.sql})" for k, p in pieces.items()})
            formula = _substitute(expr, {k: f"({p.formula})" for k, p in pieces.items()})
            return _Piece(sql, first.model, frozenset().union(*(p.aggs for p in pieces.values())), formula,
                          first.time_dim)
        raise Untranslatable(f"its input {name!r} is a {kind} metric: {_why_not(metric)}")

    def _input(self, item, filters: list[str], shape: _Shape, seen: set, role: str) -> _Piece:
        if not item or not item.get("name"):
            raise Untranslatable(f"its {role} names no metric")
        if item.get("offset_window") or item.get("offset_to_grain"):
            offset = (f"by {_window(item.get('offset_window'))}" if item.get("offset_window")
                      else f"to the start of the {item.get('offset_to_grain')}")
            raise Untranslatable(
                f"input {item.get('alias') or item['name']!r} is offset {offset}: the metric has a value per period "
                "of metric_time only (MetricFlow answers it grouped by metric_time), each period's value set against "
                "another period's; a task's value is one aggregate over the rows of its own window, so no task can "
                "ask for it")
        return self._piece(item["name"], [*_templates(item.get("filter")), *filters], shape, seen)

    def _simple(self, metric: dict, filters: list[str], shape: _Shape) -> _Piece:
        model, measure = self._measure(metric)
        time_dim = measure.get("agg_time_dimension") or model.default_time
        if model.name != shape.model.name:  # an input of a composite on another semantic model: its own rows
            shape = _Shape(model, self.models, self.owners, self.dialect, time_dim)
        measure_input = (metric.get("type_params") or {}).get("measure") or {}
        filters = [*filters, *_templates(measure_input.get("filter"))]
        if measure.get("non_additive_dimension"):
            dim = measure["non_additive_dimension"]
            raise Untranslatable(f"measure {measure.get('name')!r} is semi-additive (non_additive_dimension "
                                 f"{dim.get('name') if isinstance(dim, dict) else dim!r}): its value is a snapshot "
                                 "per time window, not one aggregate over rows")
        conditions = [self._render(t, shape, time_dim) for t in filters]
        agg = str(measure.get("agg") or "").lower()
        agg_params = measure.get("agg_params") or {}
        column = shape.measure_column(measure.get("name") or metric["name"], measure["expr"])
        sql = _aggregate(agg, column, conditions, agg_params)
        if sql is None:
            raise Untranslatable(f"aggregation {agg!r} of measure {measure.get('name')!r} is not translatable")
        # a period without a value is this number (the legacy spec on the measure input, dbt 1.12's on the metric)
        fill = measure_input.get("fill_nulls_with")
        if fill is None:
            fill = (metric.get("type_params") or {}).get("fill_nulls_with")
        if fill is not None:
            if not _NUMBER.fullmatch(str(fill).strip()):
                raise Untranslatable(f"fill_nulls_with {fill!r} is not a number")
            sql = f"coalesce({sql}, {str(fill).strip()})"
        spoken = _spoken(agg, measure["expr"], agg_params)
        formula = f"{spoken} over {model.name.replace('_', ' ')}"
        if conditions:
            formula += " where " + " and ".join(conditions)
        if fill is not None:
            formula += f"; {str(fill).strip()} where no row has a value"
        aggs = {agg}
        if agg in ("median", "percentile") and agg_params.get("use_approximate_percentile"):
            aggs.add("approximate")
            formula += (" (exact here; the dbt semantic layer computes this percentile approximately: "
                        "use_approximate_percentile)")
        return _Piece(sql, model.name, frozenset(aggs), formula, time_dim)

    def _render(self, template: str, shape: _Shape, time_dim: str | None) -> str:
        import jinja2

        def dimension(name, entity_path=()):
            return _Ref(shape.dimension(name, entity_path, time_dim), self.dialect)

        def time_dimension(name, time_granularity=None, entity_path=(), date_part_name=None):
            ref = _Ref(shape.dimension(name, entity_path, time_dim), self.dialect)
            ref = ref.grain(time_granularity) if time_granularity else ref
            return ref.date_part(date_part_name) if date_part_name else ref

        def entity(name, entity_path=()):
            return _Ref(shape.entity(name), self.dialect)

        def metric(name, group_by=()):
            raise Untranslatable(f"the filter {template!r} reads metric {name!r}: a filter on another metric's value "
                                 "is not one aggregate over rows")

        env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
        try:
            return env.from_string(template).render(Dimension=dimension, TimeDimension=time_dimension,
                                                    Entity=entity, Metric=metric).strip()
        except Untranslatable:
            raise
        except jinja2.TemplateError as exc:
            raise Untranslatable(f"cannot read the filter {template!r}: {exc}") from None

    def _declaration(self, metric: dict, piece: _Piece, model: SemanticModel) -> dict:
        kind = metric.get("type")
        params = metric.get("type_params") or {}
        fmt = "number"
        if kind == "ratio":  # a share: one measure over itself (the numerator filtered), or a count over a count
            num = self._measure_of(params.get("numerator"))
            den = self._measure_of(params.get("denominator"))
            if num and den and (num == den or {num[1], den[1]} <= COUNTING):
                fmt = "percent"
        decl = {
            "label": _label(metric),
            "value": piece.sql,
            "unit": "share" if fmt == "percent" else "",
            "format": fmt,
            "formula": piece.formula,
            "tier": "L1" if kind == "simple" else "L2",
            "grain": _rows_noun(model),
        }
        time_dim = model.dimensions.get(piece.time_dim or "")
        column = time_column(time_dim["expr"], self.dialect) if time_dim and time_dim["type"] == "time" else None
        if column and kind not in ("ratio", "derived"):  # a composite's is its inputs' (_composite_columns)
            decl["period"] = f"{model.table_name}.{column}"  # the measure's agg_time_dimension
        override = _dptool(metric)
        given = (override or {}).get("metric") if isinstance(override, dict) else None
        if given is not None:
            where = f"{metric.get('original_file_path', '?')}: {metric.get('unique_id', metric['name'])}"
            if not isinstance(given, dict):
                raise DptoolError(f"{where}: meta.dptool.metric must be a mapping")
            unknown = sorted(set(given) - set(DECL_KEYS))
            if unknown:
                raise DptoolError(f"{where}: meta.dptool.metric.{unknown[0]} is not a key a semantic metric can "
                                  f"override ({', '.join(DECL_KEYS)})")
            if given.get("format", "number") not in METRIC_FORMATS:
                raise DptoolError(f"{where}: meta.dptool.metric.format is {given['format']!r}; expected one of "
                                  f"{', '.join(METRIC_FORMATS)}")
            decl.update({k: str(v) for k, v in given.items()})
        return decl

    def _measure_of(self, item) -> tuple[str, str] | None:
        """(measure expression, aggregation) of a ratio's simple input metric; None for any other input."""
        metric = self.metrics.get((item or {}).get("name"))
        if metric is None or metric.get("type") != "simple":
            return None
        try:
            model, measure = self._measure(metric)
        except Untranslatable:
            return None
        return f"{model.name}.{measure.get('expr')}", str(measure.get("agg") or "").lower()


def _label(metric: dict) -> str:
    """The metric's label; one dbt wrote as the metric's name (a measure's create_metric, dbt 1.12 without a
    label) is an identifier no question may show: it is spelled out from the name, as for a metric without one."""
    label = str(metric.get("label") or "").strip()
    if not label or (label == metric["name"] and _PLAIN.fullmatch(label)):
        return metric["name"].replace("_", " ").strip().title()
    return label


def _aggregate(agg: str, column: str, conditions: list[str], params: dict) -> str | None:
    cond = " and ".join(f"({c})" for c in conditions)
    arg = f"case when {cond} then {column} end" if cond else column
    if agg in ("sum", "min", "max"):
        return f"{agg}({arg})"
    if agg == "average":
        return f"avg({arg})"
    if agg == "count":
        return f"count({arg})"
    if agg == "count_distinct":
        return f"count(distinct {arg})"
    if agg == "sum_boolean":
        test = f"{cond} and ({column})" if cond else column
        return f"sum(case when {test} then 1 else 0 end)"
    if agg in ("median", "percentile"):
        p = 0.5 if agg == "median" else params.get("percentile")
        if p is None:
            return None
        func = "percentile_disc" if params.get("use_discrete_percentile") else "percentile_cont"
        return f"{func}({float(p)}) within group (order by {arg})"
    return None


def _spoken(agg: str, expr: str, params: dict) -> str:
    """An aggregation as the metric catalog writes it: AVG(amount), COUNT(DISTINCT customer_id), ..."""
    if agg == "average":
        return f"AVG({expr})"
    if agg == "count_distinct":
        return f"COUNT(DISTINCT {expr})"
    if agg == "sum_boolean":
        return f"COUNT(rows where {expr})"
    if agg == "percentile":
        return f"PERCENTILE_{params.get('percentile')}({expr})"
    return f"{agg.upper()}({expr})"


def _substitute(expr: str, values: dict[str, str]) -> str:
    """Replace whole-word names in a derived metric's expression, longest first, in one pass."""
    if not values:
        return expr
    names = sorted(values, key=lambda n: (-len(n), n))
    pattern = re.compile(r"(?<![A-Za-z0-9_.])(" + "|".join(re.escape(n) for n in names) + r")(?![A-Za-z0-9_])")
    return pattern.sub(lambda m: values[m.group(1)], expr)


# --- the generated models -------------------------------------------------------------------------------------

def model_sql(m: MetricModel) -> str:
    if m.inputs:
        return "".join([HEADER, f"-- metric `{m.metric}`: a composite of {', '.join(m.components)}, each computed "
                        "under its own filter and rules (dptool.metric_query)\n",
                        "{{ config(materialized='ephemeral', tags=['dptool_semantic']) }}\n",
                        "{{ dptool.composite_metric(" + json.dumps(list(m.components)) + ") }}\n"])
    lines = [HEADER, f"-- metric `{m.metric}`: one row per row of semantic model `{m.semantic_model}`, joined "
             "through its foreign entities\n", "{{ config(materialized='ephemeral', tags=['dptool_semantic']) }}\n",
             "select\n"]
    cols = [f"    {sql} as {name}" for sql, name in m.columns]
    lines.append(",\n".join(cols) + "\n")
    lines.append(f"from {{{{ {m.ref_call} }}}} as {BASE}\n")
    for alias, ref_call, base_col, joined_col in m.joins:
        left = base_col if "." in base_col else f"{BASE}.{base_col}"  # a second hop joins on the first's column
        lines.append(f"left join {{{{ {ref_call} }}}} as {alias}\n    on {left} = {alias}.{joined_col}\n")
    if m.conversion:
        lines.append(_conversion_join(m.conversion))
    return "".join(lines)


def _conversion_join(c: dict) -> str:
    """The conversions that count on each base event: events of the same entity on the base event's day or after
    it and, with a window, before the window has passed (MetricFlow: base <= conversion, base > conversion - window,
    both at day grain)."""
    day = "{{{{ dbt.date_trunc('day', '{}') }}}}"
    base, conv = day.format(c["base_time"]), day.format(c["conversion_time"])
    within = ""
    if c["window"]:
        count, grain = c["window"]
        within = (f"\n          and {base} > {{{{ dbt.dateadd('{grain}', {-count}, "
                  f"dbt.date_trunc('day', '{c['conversion_time']}')) }}}}")
    return (f"left join (\n    select dptool_b.{c['base_entity']} as dptool_entity, {c['per_event']} as {CONVERSIONS}\n"
            f"    from {{{{ {c['base_ref']} }}}} as dptool_b\n"
            f"    join {{{{ {c['conversion_ref']} }}}} as dptool_c\n"
            f"      on dptool_c.{c['conversion_entity']} = dptool_b.{c['base_entity']}\n"
            f"          and {base} <= {conv}{within}\n"
            f"    group by dptool_b.{c['base_entity']}\n"
            f") as dptool_conversion on dptool_conversion.dptool_entity = {BASE}.{c['base_entity']}\n")


def properties(layer: SemanticLayer) -> str:
    models = []
    for name, m in sorted(layer.metrics.items()):
        models.append({
            "name": name,
            "description": m.description,
            "config": {"meta": {"dptool": {"metric": dict(m.decl),
                                           "semantic": {"metric": m.metric, "semantic_model": m.semantic_model}}}},
            **({"columns": [{"name": n} for _, n in m.columns]} if m.columns else {}),
        })
    text = yaml.safe_dump({"version": 2, "models": models}, sort_keys=False, allow_unicode=True, width=1000)
    return "# written by `dptool generate` from the dbt semantic layer; do not edit\n" + text


def write_models(project_dir: Path, layer: SemanticLayer | None, extra: dict[str, str] | None = None,
                 model_path: str = "models") -> list[str]:
    """Write the generated models (only files whose text changed) and delete stale ones; returns what changed.

    `extra` are more files for the same folder, by name (the rule documents of --rules-dir as docs blocks).
    """
    folder = Path(project_dir) / model_path / GENERATED_DIR
    wanted: dict[str, str] = dict(extra or {})
    if layer is not None and layer.metrics:
        wanted.update({f"{name}.sql": model_sql(m) for name, m in layer.metrics.items()})
        wanted[PROPERTIES] = properties(layer)
    changed = []
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if path.is_file() and path.name not in wanted:
                path.unlink()
                changed.append(f"deleted {path.name}")
    if wanted:
        folder.mkdir(parents=True, exist_ok=True)
    for file_name, text in sorted(wanted.items()):
        path = folder / file_name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(f"wrote {file_name}")
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
    return changed


def docs_blocks(documents: dict[str, str]) -> str:
    """Rule documents as docs blocks `rule__<id>`, so that gold models and dbt docs show them."""
    parts = ["{#- written by `dptool generate` from the markdown files of --rules-dir; do not edit -#}\n"]
    for rule_id, text in sorted(documents.items()):
        body = text.strip()
        if "{{" in body or "{%" in body or "{#" in body:
            body = "{% raw %}" + body + "{% endraw %}"
        parts.append(f"{{% docs rule__{rule_id} %}}\n{body}\n{{% enddocs %}}\n")
    return "\n".join(parts)


def summary(layer: SemanticLayer | None) -> list[str]:
    """One line per translated count, skipped metric and note: what `dptool generate` prints."""
    if layer is None or not (layer.metrics or layer.skipped or layer.notes):
        return []
    lines = [f"semantic layer: {len(layer.metrics)} metrics translated, {len(layer.skipped)} skipped"]
    lines += [f"skipped metric {name}: {reason}" for name, reason in sorted(layer.skipped.items())]
    lines += [f"note: {n}" for n in layer.notes]
    return lines  # layer.warnings: generate says them with its summary, and card.md lists them


def dumps(layer: SemanticLayer) -> str:
    """The translation as JSON (tests and debugging)."""
    return json.dumps({name: {"value": m.decl["value"], "columns": [n for _, n in m.columns]}
                       for name, m in sorted(layer.metrics.items())}, indent=2, sort_keys=True)


def _rows_noun(model: SemanticModel) -> str:
    """What one row of a semantic model is, plural, as a person says it: its primary entity (`sale` -> "sales",
    `order_id` -> "orders"), else the model's name ("brand revenues" only when there is no entity to say)."""
    from dptool.project.nouns import noun

    if model.primary_entity:
        return noun(model.primary_entity)
    return model.name.replace("_", " ")
