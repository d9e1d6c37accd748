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
  `1.0 * numerator / nullif(denominator, 0)`, or the derived metric's `expr` over its inputs' aliases. Every
  input must aggregate rows of the same semantic model (so that a window means the same time in each).
- filters: `Dimension('entity__dim')`, `TimeDimension(...)`, `Entity(...)` resolve to the metric
  model's columns (joined dimensions included); `Metric(...)` filters do not translate.
- dimensions: categorical dimensions that are plain columns, and each measure's agg_time_dimension,
  become catalog dimensions of the semantic model's node (an agent-visible table), except one whose
  `config.meta.dptool.dimension` (or its node column's `meta.dptool.dimension`) is false; entities become joins.

Cumulative and conversion metrics, offsets, semi-additive measures and metrics whose inputs live in
different semantic models have no single row grain: each is skipped with its reason, and the run goes on.
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
PRIMARY_LIKE = ("primary", "unique", "natural")
COUNTING = {"count", "count_distinct", "sum_boolean"}
METRIC_FORMATS = ("number", "percent", "currency")
DECL_KEYS = ("label", "value", "unit", "format", "formula", "tier", "grain", "period", "duration")
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


def is_generated(node: dict) -> bool:
    """Whether a manifest node is one of the models this module writes."""
    path = (node.get("original_file_path") or "").replace("\\", "/")
    return f"/{GENERATED_DIR}/" in f"/{path}"


def read_layer(manifest: dict, project: str) -> SemanticLayer:
    """Translate the manifest's semantic layer; never raises for an untranslatable metric (it is skipped)."""
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
        layer.models[model.name] = model
    metrics = {m["name"]: m for _, m in sorted((manifest.get("metrics") or {}).items())
               if (m.get("config") or {}).get("enabled", True) is not False}
    if not metrics and not layer.models:
        return layer
    owners = _entity_owners(layer.models)
    for model in layer.models.values():
        for _, joined, base_col, joined_col in _joins(model, layer.models, owners):
            layer.joins.append((model.node_id, base_col, layer.models[joined].node_id, joined_col))
        for time_dim in sorted(_agg_time_dimensions(model)):
            dim = model.dimensions.get(time_dim)
            if dim and dim["type"] == "time" and _PLAIN.fullmatch(dim["expr"]) and _kind(dim) is not False:
                layer.dimensions.append((model.node_id, dim["expr"], "temporal", dim["label"]))
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
        if metric.get("type") not in ("simple", "ratio", "derived"):
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
            layer.metrics[model_name] = translator.translate(metric, model_name)
        except Untranslatable as exc:
            layer.skipped[name] = str(exc)
    _resolve_inputs(layer)
    return layer


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
        what = f"a window of {_window(span)}" if span else (f"{grain}-to-date" if grain else "all time so far")
        return f"cumulative metric ({what}): a running total over time, not one aggregate over rows"
    if kind == "conversion":
        params = (metric.get("type_params") or {}).get("conversion_type_params") or {}
        base = (params.get("base_measure") or {}).get("name")
        conv = (params.get("conversion_measure") or {}).get("name")
        return (f"conversion metric ({base} -> {conv} by {params.get('entity')} within "
                f"{_window(params.get('window')) or 'any time'}): it matches two event streams per entity, "
                "not one aggregate over rows")
    return f"metric type {kind!r} is not translatable"


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
        primary_entity=raw.get("primary_entity"),
        domain=str(explicit) if explicit else project,
        file=raw.get("original_file_path") or "",
    ), ""


def _agg_time_dimensions(model: SemanticModel) -> set[str]:
    found = {m.get("agg_time_dimension") or model.default_time for m in model.measures.values()}
    if model.default_time:
        found.add(model.default_time)
    return {f for f in found if f}


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
        if not _PLAIN.fullmatch(key) or entity == BASE:
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
        self.model, self.models, self.dialect = model, models, dialect
        self.columns: list[tuple[str, str]] = []
        self.joins = [(alias, models[t].ref_call, b, j) for alias, t, b, j in _joins(model, models, owners)]
        self.joined = {alias: models[t] for alias, t, _, _ in _joins(model, models, owners)}
        other_times = {d["expr"] for n, d in model.dimensions.items()
                       if d["type"] == "time" and n in _agg_time_dimensions(model) and n != time_dim}
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
        for alias, joined in self.joined.items():
            for dim in joined.dimensions.values():
                if dim["type"] == "categorical" and _PLAIN.fullmatch(dim["expr"]):
                    self.add(f"{alias}.{dim['expr']}", dim["expr"])

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
        raise Untranslatable(f"the filter names {reference!r}: only dimensions of the semantic model and of those "
                             "one entity away translate")

    def _dim(self, model: SemanticModel, alias: str, name: str) -> str:
        dim = model.dimensions[name]
        if _PLAIN.fullmatch(dim["expr"]):
            sql = f"{alias}.{dim['expr']}"
            preferred = dim["expr"] if alias == BASE else f"{alias}__{name}"
        else:
            sql = self.qualify(dim["expr"], alias)
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
        if piece.model != model.name:
            raise Untranslatable(f"its inputs aggregate rows of semantic models {model.name!r} and {piece.model!r}: "
                                 "no single row grain")
        decl = self._declaration(metric, piece, model)
        inputs: list[dict] = []
        if metric.get("type") in ("ratio", "derived"):
            inputs, decl["value"] = self._composite(metric)
        description = metric.get("description") or ""
        return MetricModel(
            name=model_name, metric=name, semantic_model=model.name, ref_call=model.ref_call, joins=shape.joins,
            columns=[] if inputs else shape.columns, decl=decl,
            description=(f"{decl['label']} — from the dbt semantic layer (metric `{name}`, semantic model "
                         f"`{model.name}`)." + (f" {description.strip()}" if description.strip() else "")),
            tables=tuple(sorted({model.node_id, *(m.node_id for m in shape.joined.values())})),
            inputs=inputs,
        )

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
            self._same(num, den)
            aggs = num.aggs | den.aggs
            return _Piece(f"1.0 * ({num.sql}) / nullif({den.sql}, 0)", num.model, aggs,
                          f"({num.formula}) / ({den.formula})", num.time_dim)
        if kind == "derived":
            pieces, first = {}, None
            for item in params.get("metrics") or []:
                piece = self._input(item, filters, shape, seen, "input")
                if first is None:
                    first = piece
                self._same(first, piece)
                pieces[item.get("alias") or item["name"]] = piece
            if not pieces:
                raise Untranslatable(f"derived metric {name!r} names no input metrics")
            expr = params.get("expr") or next(iter(pieces))
            sql = _substitute(expr, {k: f"({p.sql})" for k, p in pieces.items()})
            formula = _substitute(expr, {k: f"({p.formula})" for k, p in pieces.items()})
            return _Piece(sql, first.model, frozenset().union(*(p.aggs for p in pieces.values())), formula,
                          first.time_dim)
        raise Untranslatable(f"its input {name!r} is a {kind} metric: {_why_not(metric)}")

    def _same(self, a: _Piece, b: _Piece) -> None:
        if a.model != b.model:
            raise Untranslatable(f"its inputs aggregate rows of semantic models {a.model!r} and {b.model!r}: "
                                 "no single row grain")

    def _input(self, item, filters: list[str], shape: _Shape, seen: set, role: str) -> _Piece:
        if not item or not item.get("name"):
            raise Untranslatable(f"its {role} names no metric")
        if item.get("offset_window") or item.get("offset_to_grain"):
            offset = _window(item.get("offset_window")) or f"to the {item.get('offset_to_grain')}"
            raise Untranslatable(f"input {item.get('alias') or item['name']!r} is offset by {offset}: a comparison "
                                 "across periods, not one aggregate over rows")
        return self._piece(item["name"], [*_templates(item.get("filter")), *filters], shape, seen)

    def _simple(self, metric: dict, filters: list[str], shape: _Shape) -> _Piece:
        model, measure = self._measure(metric)
        if model.name != shape.model.name:
            return _Piece("", model.name, frozenset(), "", None)  # reported by the caller as two row grains
        measure_input = (metric.get("type_params") or {}).get("measure") or {}
        filters = [*filters, *_templates(measure_input.get("filter"))]
        if measure.get("non_additive_dimension"):
            dim = measure["non_additive_dimension"]
            raise Untranslatable(f"measure {measure.get('name')!r} is semi-additive (non_additive_dimension "
                                 f"{dim.get('name') if isinstance(dim, dict) else dim!r}): its value is a snapshot "
                                 "per time window, not one aggregate over rows")
        time_dim = measure.get("agg_time_dimension") or model.default_time
        conditions = [self._render(t, shape, time_dim) for t in filters]
        agg = str(measure.get("agg") or "").lower()
        column = shape.measure_column(measure.get("name") or metric["name"], measure["expr"])
        sql = _aggregate(agg, column, conditions, measure.get("agg_params") or {})
        if sql is None:
            raise Untranslatable(f"aggregation {agg!r} of measure {measure.get('name')!r} is not translatable")
        fill = measure_input.get("fill_nulls_with")
        if fill is not None:
            sql = f"coalesce({sql}, {fill})"
        spoken = _spoken(agg, measure["expr"], measure.get("agg_params") or {})
        formula = f"{spoken} over {model.name.replace('_', ' ')}"
        if conditions:
            formula += " where " + " and ".join(conditions)
        return _Piece(sql, model.name, frozenset({agg}), formula, time_dim)

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
            "label": str(metric.get("label") or metric["name"].replace("_", " ").title()),
            "value": piece.sql,
            "unit": "share" if fmt == "percent" else "",
            "format": fmt,
            "formula": piece.formula,
            "tier": "L1" if kind == "simple" else "L2",
            "grain": model.name.replace("_", " "),
        }
        time_dim = model.dimensions.get(piece.time_dim or "")
        if time_dim and time_dim["type"] == "time" and _PLAIN.fullmatch(time_dim["expr"]):
            decl["period"] = f"{model.table_name}.{time_dim['expr']}"  # the measure's agg_time_dimension
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
        lines.append(f"left join {{{{ {ref_call} }}}} as {alias}\n    on {BASE}.{base_col} = {alias}.{joined_col}\n")
    return "".join(lines)


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
    return lines


def dumps(layer: SemanticLayer) -> str:
    """The translation as JSON (tests and debugging)."""
    return json.dumps({name: {"value": m.decl["value"], "columns": [n for _, n in m.columns]}
                       for name, m in sorted(layer.metrics.items())}, indent=2, sort_keys=True)
