"""Stage 1, load: the dbt manifest -> a typed catalog of tables, dimensions, joins, metrics and rules.

Declarations live under `meta.dptool` of ordinary dbt nodes (DESIGN §2); this module is the only
place that knows their shape. Every malformed declaration raises one DptoolError naming the file,
the node and the key.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from dptool.errors import DptoolError
from dptool.project import declarations, semantic
from dptool.project.labels import reader_key
from dptool.project.rule_columns import constant_columns

DIMENSION_KINDS = ("temporal", "spatial", "categorical")
RULE_TYPES = ("definitional", "exclusionary", "temporal", "conditional", "privacy", "override")
METRIC_KEYS = ("label", "value", "unit", "format", "formula", "tier", "components", "grain", "period", "duration",
               "entity", "selection")
RULE_KEYS = ("title", "type", "effective_from", "applies_when", "modifies")
METRIC_FORMATS = ("number", "percent", "currency")


@dataclass(frozen=True)
class Table:
    unique_id: str
    name: str  # the relation's identifier, as an agent sees it
    domain: str
    relation_name: str
    description: str
    columns: dict[str, str]  # name -> description


@dataclass(frozen=True)
class Dimension:
    table: str  # Table.unique_id
    column: str
    kind: str
    label: str
    where: str = field(default="", compare=False)  # the properties file and node that declare it, for errors
    quote: bool = field(default=False, compare=False)  # the column declares `quote: true` (dptool.sql.column)

    @property
    def id(self) -> str:
        return f"{self.table}.{self.column}"


@dataclass(frozen=True)
class Join:
    from_table: str
    from_column: str
    to_table: str
    to_column: str


@dataclass(frozen=True)
class Selection:
    """The members a metric's definition selects and the rows they are picked over (meta.dptool.metric.selection):
    a top ten picked over the whole history and one picked afresh each month are two different metrics."""

    members: str  # who is selected, in words: "the ten sellers with the highest item value (price plus freight)"
    window: str  # SELECTION_WINDOWS' key, or the window in words ("over the 12 months before the period asked about")

    @property
    def window_text(self) -> str:
        """The window as a reader is told it: a known key's sentence, else the declared words."""
        return SELECTION_WINDOWS.get(self.window, self.window)

    @property
    def sentence(self) -> str:
        """"<members>, picked <window>": the one reading of the selection."""
        return f"{self.members}, picked {self.window_text}"


# the windows most selections have, by key; any other window is declared in words
SELECTION_WINDOWS = {
    "history": "over the whole history on record, whatever the period, slice or group asked about",
    "period": "afresh within the period and the slice or group asked about (for a month-by-month trend, within each "
              "month on its own)",
}


@dataclass(frozen=True)
class Metric:
    id: str  # the metric model's name
    unique_id: str
    domain: str
    label: str
    value: str
    unit: str
    format: str
    formula: str
    tier: str
    grain: str  # what one row is, plural: "reviews", "delivered orders"
    description: str
    components: tuple[str, ...]  # a composite's inputs, each once: `value` is an expression over them
    tables: tuple[str, ...]  # Table.unique_id, reached through depends_on
    columns: tuple[str, ...]  # a composite's: those every component has (what it can be sliced by)
    # the temporal Dimension.id whose date places a row in a period (a month, a quarter, a year): questions'
    # windows and trends read it; "" when the metric's rows carry no date (meta.dptool.metric.period)
    period: str = ""
    period_doc: str = ""  # what that date is, as the metric model documents its column
    duration: str = ""  # how the durations the metric measures are counted (meta.dptool.metric.duration)
    # the column whose distinct values are the entities a row belongs to (a sale, an order): what the minimum
    # support counts (meta.dptool.metric.entity; a semantic model's primary entity); "" when not declared
    entity: str = ""
    # whom the metric's definition selects and over which rows (meta.dptool.metric.selection); None: it selects none
    selection: Selection | None = None
    # translated from the dbt semantic layer, whose metric types state their own windows (a conversion's)
    semantic: bool = False


@dataclass(frozen=True)
class Rule:
    id: str  # without the rule__ prefix
    unique_id: str
    domain: str
    title: str
    type: str
    effective_from: str
    applies_when: dict[str, str]
    modifies: tuple[str, ...]
    document: str
    # whether the macro can run while dbt parses (no graph, no query results then): gold models call each rule
    # at parse time for dbt docs' lineage, and one that cannot run there would break the project's `dbt parse`
    parses: bool = True
    # the row-level columns the macro sets to a constant (dptool.project.rule_columns): no slice or group on them
    constants: tuple[str, ...] = ()


@dataclass
class Catalog:
    project: str
    manifest_hash: str
    tables: dict[str, Table] = field(default_factory=dict)
    dimensions: dict[str, Dimension] = field(default_factory=dict)
    joins: list[Join] = field(default_factory=list)
    metrics: dict[str, Metric] = field(default_factory=dict)
    rules: dict[str, Rule] = field(default_factory=dict)
    semantic: Any = None  # dptool.project.semantic.SemanticLayer: what the dbt semantic layer gave, and what it skipped
    # a domain's own conventions for kb/<domain>/metrics.md: the docs block `dptool_conventions__<domain>` (or
    # `dptool_conventions`, for every domain), as the project writes it
    conventions: dict[str, str] = field(default_factory=dict)

    # rows behind each dimension (set once the data is profiled): when two tables under a metric have a
    # dimension column of the same name (Berka's `date` on account, trans and loan), the metric model's
    # column is taken to be the fact table's, the one with the most rows
    dimension_weight: dict[str, int] = field(default_factory=dict)

    def dimensions_of(self, metric: Metric) -> list[Dimension]:
        """Dimensions on the metric's tables that the metric model exposes as columns, one per column name;
        of the temporal ones, only the metric's period."""
        found: dict[str, Dimension] = {}
        for dim in sorted(self.dimensions.values(), key=lambda d: d.id):
            if dim.kind == "temporal" and dim.id != metric.period:
                continue
            if dim.table in metric.tables and dim.column in metric.columns:
                best = found.get(dim.column)
                if best is None or self.dimension_weight.get(dim.id, 0) > self.dimension_weight.get(best.id, 0):
                    found[dim.column] = dim
        return sorted(found.values(), key=lambda d: d.id)

    def rules_of(self, metric_id: str) -> list[Rule]:
        """The rules that declare they modify the metric itself (its rule -> metric edges)."""
        return sorted((r for r in self.rules.values() if metric_id in r.modifies), key=lambda r: r.id)

    def metric_tree(self, metric_id: str) -> list[str]:
        """The metric and every metric below it through components, each once, in the order met."""
        found: list[str] = []
        todo = [metric_id]
        while todo:
            current = todo.pop(0)
            if current in found or current not in self.metrics:
                continue
            found.append(current)
            todo.extend(self.metrics[current].components)
        return found

    def governing_rules(self, metric_id: str) -> list[Rule]:
        """The rules in force for a metric: those that modify it, and through its components (recursively,
        a cycle ends where it started) those that govern each component. Sorted by id."""
        ids = {r.id for m in self.metric_tree(metric_id) for r in self.rules_of(m)}
        return [self.rules[r] for r in sorted(ids)]

    def rules_argument(self, metric_id: str, rules) -> list[str] | dict[str, list[str]]:
        """`rules` as dptool.metric_query takes them for this metric.

        A metric that is not a composite takes the list. A composite takes a mapping from every metric of its
        tree (itself first) to the rules of `rules` that modify that metric; a rule that modifies none of them
        applies to the composite itself.
        """
        rules = list(rules)
        tree = self.metric_tree(metric_id)
        if len(tree) == 1:
            return rules
        routed = {m: [r for r in rules if r in self.rules and m in self.rules[r].modifies] for m in tree}
        routed[metric_id] += [r for r in rules if not any(r in v for v in routed.values())]
        return routed

    def subset(self, domain: str) -> Catalog:
        """The part of the catalog that belongs to one domain."""
        tables = {k: t for k, t in self.tables.items() if t.domain == domain}
        return Catalog(
            project=self.project,
            manifest_hash=self.manifest_hash,
            tables=tables,
            dimensions={k: d for k, d in self.dimensions.items() if d.table in tables},
            joins=[j for j in self.joins if j.from_table in tables and j.to_table in tables],
            metrics={k: m for k, m in self.metrics.items() if m.domain == domain},
            rules={k: r for k, r in self.rules.items() if r.domain == domain},
            conventions={k: v for k, v in self.conventions.items() if k == domain},
        )

    @property
    def domains(self) -> list[str]:
        return sorted({m.domain for m in self.metrics.values()})

    def table_by_name(self, name: str) -> Table:
        for table in self.tables.values():
            if table.name == name:
                return table
        raise KeyError(name)


def load_catalog(manifest: dict, manifest_path: str = "manifest.json",
                 rule_documents: dict[str, str] | None = None,
                 relation_columns: dict[str, list[str]] | None = None) -> Catalog:
    """Build the catalog from a parsed manifest.json.

    Metrics come from models declaring `meta.dptool.metric` and from the dbt semantic layer
    (dptool.project.semantic; a declaration wins over a semantic metric of the same name). `rule_documents`
    maps a rule id to its document (markdown files of `--rules-dir`), for rule macros whose
    description is empty.
    """
    declarations.check(manifest, manifest_path, metric_keys=METRIC_KEYS, rule_keys=RULE_KEYS)
    project = manifest.get("metadata", {}).get("project_name") or ""
    digest = hashlib.sha256(json.dumps(_hashed_part(manifest), sort_keys=True).encode()).hexdigest()
    catalog = Catalog(project=project, manifest_hash=digest)
    nodes = {**manifest.get("nodes", {}), **manifest.get("sources", {})}

    for uid, node in sorted(nodes.items()):
        if node.get("resource_type") in ("model", "seed", "source", "snapshot") and _dptool(node).get("table"):
            _load_table(catalog, uid, node, project)
    for _, node in sorted(nodes.items()):
        if node.get("resource_type") == "test":
            _load_join(catalog, node)
    _extend_with_semantic_layer(catalog, manifest, relation_columns)
    for uid, node in sorted(nodes.items()):
        if node.get("resource_type") == "model" and "metric" in _dptool(node) and not semantic.is_generated(node):
            _load_metric(catalog, uid, node, nodes, project)
    docs = manifest.get("docs", {})
    for uid, macro in sorted(manifest.get("macros", {}).items()):
        if "rule" in _dptool(macro):
            _load_rule(catalog, uid, macro, docs, rule_documents or {}, manifest.get("macros", {}))
    _check_references(catalog, manifest, manifest_path)
    _check_labels(catalog, manifest)
    _load_conventions(catalog, docs)
    return catalog


CONVENTIONS_DOC = "dptool_conventions"


def _load_conventions(catalog: Catalog, docs: dict) -> None:
    """Each domain's conventions: the docs block `dptool_conventions__<domain>`, else `dptool_conventions`."""
    blocks = {d.get("name"): (d.get("block_contents") or "").strip() for d in docs.values()}
    for domain in catalog.domains:
        text = blocks.get(f"{CONVENTIONS_DOC}__{domain}") or blocks.get(CONVENTIONS_DOC)
        if text:
            catalog.conventions[domain] = text


# What dptool reads of each resource: the hash changes when a declaration, a model's code or a
# rule changes, and not when dbt merely ran (timestamps, compiled code, macros used at run time).
_HASHED_KEYS = {
    "nodes": ("resource_type", "name", "alias", "relation_name", "raw_code", "meta", "columns", "fqn",
              "test_metadata", "original_file_path", "config"),
    "sources": ("name", "identifier", "relation_name", "meta", "columns", "fqn"),
    "macros": ("name", "macro_sql", "meta", "description"),
    "docs": ("name", "block_contents"),
    # the dbt semantic layer (hashed only where a project has one: other projects keep their hash)
    "semantic_models": ("name", "model", "node_relation", "defaults", "entities", "dimensions", "measures",
                        "primary_entity", "config"),
    "metrics": ("name", "label", "type", "type_params", "filter", "meta", "config"),
}


def _hashed_part(manifest: dict) -> dict:
    def ours(node: dict) -> bool:  # gold, semantic-layer and ablation models are dptool output, not input
        path = node.get("original_file_path") or ""
        return any(f"{folder}/" in path for folder in ("dptool_gold", "dptool_semantic", "dptool_ablation"))

    def pick(node: dict, keys: tuple[str, ...]) -> dict:
        picked = {k: node.get(k) for k in keys}
        if "depends_on" in node:
            picked["depends_on"] = sorted(node["depends_on"].get("nodes", []))
        return picked

    return {
        section: {uid: pick(n, keys) for uid, n in sorted(manifest.get(section, {}).items()) if not ours(n)}
        for section, keys in _HASHED_KEYS.items()
        if section not in ("semantic_models", "metrics") or manifest.get(section)
    }


def _dptool(node: dict) -> dict:
    meta = node.get("meta") or node.get("config", {}).get("meta") or {}
    value = meta.get("dptool") or {}
    return value if isinstance(value, dict) else {}


def _where(node: dict) -> str:
    path = node.get("patch_path") or node.get("original_file_path") or node.get("path") or "?"
    return f"{path.split('://')[-1]}: {node.get('unique_id', '?')}"


def _domain(node: dict, project: str) -> str:
    explicit = _dptool(node).get("domain")
    if explicit:
        return str(explicit)
    fqn = node.get("fqn") or []
    # fqn = [project, folder..., name]: the first folder names the domain
    return fqn[1] if len(fqn) > 2 else project


def _load_table(catalog: Catalog, uid: str, node: dict, project: str) -> None:
    name = node.get("alias") or node.get("identifier") or node["name"]
    columns = {c: (v.get("description") or "") for c, v in (node.get("columns") or {}).items()}
    relation = node.get("relation_name") or ""
    if not relation:
        raise DptoolError(f"{_where(node)}: meta.dptool.table is set on a node that has no relation (ephemeral?)")
    table = Table(uid, name, _domain(node, project), relation, node.get("description") or "", columns)
    catalog.tables[uid] = table
    for col_name, col in sorted((node.get("columns") or {}).items()):
        kind = _dptool(col).get("dimension")
        if kind is None or kind is False:  # false: not a dimension (the semantic layer's import skips it too)
            continue
        if kind not in DIMENSION_KINDS:
            raise DptoolError(
                f"{_where(node)}: columns.{col_name}.meta.dptool.dimension is {kind!r}; "
                f"expected one of {', '.join(DIMENSION_KINDS)}"
            )
        label = _dptool(col).get("label") or col_name.replace("_", " ")
        dim = Dimension(uid, col_name, kind, label, _where(node), quote=col.get("quote") is True)
        catalog.dimensions[dim.id] = dim


def _load_join(catalog: Catalog, node: dict) -> None:
    meta = node.get("test_metadata") or {}
    if meta.get("name") != "relationships":
        return
    kwargs = meta.get("kwargs") or {}
    depends = [d for d in node.get("depends_on", {}).get("nodes", []) if d in catalog.tables]
    if len(depends) != 2:
        return
    child = node.get("attached_node") or depends[0]
    parent = next((d for d in depends if d != child), None)
    if child not in catalog.tables or parent is None:
        return
    join = Join(child, kwargs.get("column_name") or node.get("column_name") or "", parent, kwargs.get("field") or "")
    if join not in catalog.joins:
        catalog.joins.append(join)


def _tables_below(uid: str, nodes: dict, tables: dict, seen: set[str] | None = None) -> set[str]:
    seen = set() if seen is None else seen
    found: set[str] = set()
    for parent in nodes.get(uid, {}).get("depends_on", {}).get("nodes", []):
        if parent in seen:
            continue
        seen.add(parent)
        if parent in tables:
            found.add(parent)
        else:
            found |= _tables_below(parent, nodes, tables, seen)
    return found


def _load_metric(catalog: Catalog, uid: str, node: dict, nodes: dict, project: str) -> None:
    decl = _dptool(node)["metric"]
    where = _where(node)
    if not isinstance(decl, dict):
        raise DptoolError(f"{where}: meta.dptool.metric must be a mapping with at least `value`")
    unknown = sorted(set(decl) - set(METRIC_KEYS))
    if unknown:
        raise DptoolError(f"{where}: meta.dptool.metric.{unknown[0]} is not a metric key ({', '.join(METRIC_KEYS)})")
    value = decl.get("value")
    if not value or not isinstance(value, str):
        raise DptoolError(f"{where}: meta.dptool.metric.value is missing (the aggregate SQL, e.g. avg(delivery_days))")
    fmt = decl.get("format", "number")
    if fmt not in METRIC_FORMATS:
        raise DptoolError(f"{where}: meta.dptool.metric.format is {fmt!r}; expected one of {', '.join(METRIC_FORMATS)}")
    components = _component_ids(decl.get("components"), where)
    columns = tuple(node.get("columns") or {})
    if not columns and not components:
        raise DptoolError(f"{where}: metric model documents no columns; list them in its properties file")
    tables = tuple(sorted(_tables_below(uid, nodes, catalog.tables)))
    if not tables and not components:
        raise DptoolError(f"{where}: metric model reads no table marked meta.dptool.table")
    # a composite's period is placed once its tables and columns are known (_check_composites)
    period = "" if components else period_dimension(catalog, tables, columns, decl.get("period"), where)
    period_doc = _period_doc(catalog, node, period)
    entity = str(decl.get("entity") or "")
    if entity and columns and entity not in columns:
        raise DptoolError(f"{where}: meta.dptool.metric.entity is {entity!r}, which is not a column of the model "
                          f"({', '.join(columns)})")
    catalog.metrics[node["name"]] = Metric(
        id=node["name"],
        unique_id=uid,
        domain=_domain(node, project),
        label=str(decl.get("label") or node["name"].replace("_", " ").title()),
        value=value,
        unit=str(decl.get("unit") or ""),
        format=fmt,
        formula=str(decl.get("formula") or value),
        tier=str(decl.get("tier") or ""),
        grain=str(decl.get("grain") or "records"),
        description=node.get("description") or "",
        components=tuple(components),
        tables=tables,
        columns=columns,
        period=period,
        period_doc=period_doc.strip(),
        duration=str(decl.get("duration") or "").strip() or _derived_duration(uid, nodes, catalog.tables),
        entity=entity,
        selection=_selection(decl.get("selection"), where),
    )


def _selection(declared, where: str) -> Selection | None:
    """meta.dptool.metric.selection: a mapping {members, window}, each non-empty text."""
    if declared is None:
        return None
    keys = ", ".join(SELECTION_WINDOWS)
    example = ("e.g. {members: 'the ten sellers with the highest item value', window: history}; window is "
               f"one of {keys}, or the window in words")
    if not isinstance(declared, dict):
        raise DptoolError(f"{where}: meta.dptool.metric.selection is {declared!r}; expected a mapping {{members, "
                          f"window}}, {example}")
    unknown = sorted(set(declared) - {"members", "window"})
    if unknown:
        raise DptoolError(f"{where}: meta.dptool.metric.selection.{unknown[0]} is not a selection key (members, "
                          f"window)")
    for key in ("members", "window"):
        value = declared.get(key)
        if not isinstance(value, str) or not value.strip():
            raise DptoolError(f"{where}: meta.dptool.metric.selection.{key} is {value!r}; expected text, {example}")
        if re.search(r"\bpolic", value, re.IGNORECASE):  # questions say it, and never hint at a policy
            raise DptoolError(f"{where}: meta.dptool.metric.selection.{key} speaks of a policy; every question on the "
                              "metric states the selection, and a question never hints at a policy: say what the "
                              "metric's model computes")
    return Selection(" ".join(declared["members"].split()), " ".join(declared["window"].split()))


def _period_doc(catalog: Catalog, node: dict, period: str) -> str:
    """What the period's date is, as the metric model documents its column."""
    if not period:
        return ""
    docs = node.get("columns") or {}
    return ((docs.get(catalog.dimensions[period].column) or {}).get("description") or "").strip()


def _component_ids(components, where: str) -> tuple[str, ...]:
    """The metric names of `components`: names, or mappings {metric, alias, where} (an input with its own filter)."""
    if not components:
        return ()
    if isinstance(components, str | dict):
        components = [components]
    ids: list[str] = []
    for item in components:
        name = item.get("metric") if isinstance(item, dict) else item
        if not isinstance(name, str) or not name:
            raise DptoolError(f"{where}: meta.dptool.metric.components lists {item!r}; expected a metric name or "
                              "{metric: <name>, alias: <name in value>, where: <filter>}")
        if name not in ids:
            ids.append(name)
    return tuple(ids)


def _component_aliases(components) -> list[str]:
    if isinstance(components, str | dict):
        components = [components]
    return [(c.get("alias") or c.get("metric")) if isinstance(c, dict) else c for c in components or []]


def _check_composites(catalog: Catalog, manifest: dict) -> None:
    """A composite's value is an expression over its components, its model refs them, its tables are theirs
    and its columns those every component has (a slice of the composite must mean the same in each)."""
    nodes = manifest.get("nodes", {})
    done: dict[str, Metric] = {}

    def resolve(metric_id: str, path: tuple[str, ...]) -> Metric:
        metric = catalog.metrics[metric_id]
        if not metric.components or metric_id in done:
            return done.get(metric_id, metric)
        node = nodes.get(metric.unique_id, {})
        where = _where(node)
        if metric_id in path:
            raise DptoolError(f"{where}: meta.dptool.metric.components makes {metric_id!r} its own component "
                              f"({' -> '.join((*path, metric_id))})")
        parts = [resolve(c, (*path, metric_id)) for c in metric.components]
        # a semantic-layer composite's model is dptool's own, and may not be written yet
        declared = bool(node) and not semantic.is_generated(node)
        decl = _dptool(node).get("metric") or {}
        generated = getattr(catalog.semantic, "metrics", {}).get(metric_id)
        if not declared and generated is not None:
            decl = generated.decl
        if declared:
            _check_composite_value(metric, _component_aliases(decl.get("components")), where)
        depends = set(node.get("depends_on", {}).get("nodes", []))
        missing = [c for c in metric.components if catalog.metrics[c].unique_id not in depends]
        if declared and missing:
            names = ", ".join(repr(c) for c in metric.components)
            raise DptoolError(f"{where}: meta.dptool.metric.components names {missing[0]!r}, which the model does not "
                              f"ref; write the model as {{{{ dptool.composite_metric([{names}]) }}}}")
        shared = [c for c in parts[0].columns if all(c in p.columns for p in parts[1:])]
        documented = [c for c in metric.columns if c not in shared]
        if documented:
            raise DptoolError(f"{where}: columns.{documented[0]} is not a column of every component of the composite "
                              f"({', '.join(metric.components)}); a composite is sliced by the columns they share")
        tables = tuple(sorted({t for p in parts for t in p.tables} | set(metric.tables)))
        columns = tuple(metric.columns or shared)
        # declared, or the one date that places the rows of every component in a period
        # the window's filter reaches each component: the date they share places the composite's rows
        periods = {p.period for p in parts}
        if len(periods) == 1:
            period = periods.pop()
        else:
            period = period_dimension(catalog, tables, columns, decl.get("period"), where)
        period_doc = _period_doc(catalog, node, period) or next((p.period_doc for p in parts if p.period == period), "")
        done[metric_id] = Metric(**{**metric.__dict__, "columns": columns, "tables": tables, "period": period,
                                    "period_doc": period_doc})
        return done[metric_id]

    for metric_id in sorted(catalog.metrics):
        resolve(metric_id, ())
    catalog.metrics.update(done)


def _check_composite_value(metric: Metric, aliases: list[str], where: str) -> None:
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(metric.value)
    except sqlglot.errors.ParseError:
        return  # the dialect's own syntax: dbt's compile is the judge
    names = {c.name for c in tree.find_all(exp.Column)}
    unknown = sorted(names - set(aliases))
    if unknown or tree.find(exp.AggFunc):
        what = f"names {unknown[0]!r}, which is no component" if unknown else "aggregates rows"
        raise DptoolError(f"{where}: meta.dptool.metric.value of a composite is an expression over its components "
                          f"({', '.join(aliases)}), e.g. {' / '.join(aliases[:2])}; it {what}")
    unused = [a for a in aliases if a not in names]
    if unused:
        raise DptoolError(f"{where}: meta.dptool.metric.value does not use component {unused[0]!r}")


def period_dimension(catalog: Catalog, tables: tuple[str, ...], columns: tuple[str, ...], declared,
                     where: str) -> str:
    """The temporal dimension whose date places a metric's rows in a period: the one `declared` names
    (`table.column`, or a column when one table of the metric has it), else the only one the metric
    exposes. Several and none declared is an error: dptool never picks one of them silently."""
    found = [d for d in sorted(catalog.dimensions.values(), key=lambda d: d.id)
             if d.kind == "temporal" and d.table in tables and d.column in columns]

    def named(d: Dimension) -> str:
        return f"{catalog.tables[d.table].name}.{d.column}"

    if declared is None or declared == "":
        if len(found) > 1:
            raise DptoolError(f"{where}: meta.dptool.metric.period is missing, and the metric's columns are "
                              f"{len(found)} temporal dimensions ({', '.join(named(d) for d in found)}); name the "
                              "one whose date places a row in a period (period: table.column)")
        return found[0].id if found else ""
    text = str(declared).strip()
    table, _, column = text.rpartition(".")
    match = [d for d in found if d.column == column and (not table or catalog.tables[d.table].name == table)]
    if len(match) == 1:
        return match[0].id
    if match:
        raise DptoolError(f"{where}: meta.dptool.metric.period is {text!r}, a column of "
                          f"{', '.join(named(d) for d in match)}; name one as table.column")
    exposed = ", ".join(named(d) for d in found) or "none"
    raise DptoolError(f"{where}: meta.dptool.metric.period is {text!r}, which is no temporal dimension of the "
                      f"metric's tables that its model exposes as a column (those are: {exposed}); mark the "
                      "column `meta.dptool.dimension: temporal` on its table and list it among the metric's columns")


DAYS_BETWEEN = "macro.dptool.days_between"
DATEDIFF = "macro.dbt.datediff"


def _derived_duration(uid: str, nodes: dict, tables: dict) -> str:
    """How a metric counts durations when its model says so unambiguously: the model computes them with
    dptool.days_between (whole calendar days), and with no other date difference."""
    macros = set((nodes.get(uid, {}).get("depends_on") or {}).get("macros") or [])
    if DAYS_BETWEEN in macros and DATEDIFF not in macros:
        return CALENDAR_DAYS
    return ""


CALENDAR_DAYS = ("whole calendar days between two dates: the difference of their dates, the times of day "
                 "ignored (an order placed at 23:50 and delivered at 00:10 the next day took 1 day)")


# what a macro reads that dbt fills only when it executes: the graph, query results
_EXECUTE_ONLY = re.compile(r"\bgraph\s*[.\[]|\b(run_query|load_result)\s*\(|\bcall\s+statement\b")
_JINJA_COMMENT = re.compile(r"\{#.*?#\}", re.DOTALL)


def parses(uid: str, macros: dict) -> bool:
    """Whether macro `uid`, and every macro it calls (depends_on, transitively), reads nothing dbt fills only when
    it executes; a guard `{% if execute %}` is not read, so a guarded macro is taken as one that does not parse."""
    seen, todo = set(), [uid]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        macro = macros.get(current) or {}
        if _EXECUTE_ONLY.search(_JINJA_COMMENT.sub("", macro.get("macro_sql") or "")):
            return False
        todo += (macro.get("depends_on") or {}).get("macros") or []
    return True


def _load_rule(catalog: Catalog, uid: str, macro: dict, docs: dict, documents: dict[str, str],
               macros: dict) -> None:
    where = _where(macro)
    name = macro["name"]
    if not name.startswith("rule__"):
        raise DptoolError(f"{where}: meta.dptool.rule is declared on macro {name!r}; rule macros are named rule__<id>")
    decl = _dptool(macro)["rule"]
    if not isinstance(decl, dict):
        raise DptoolError(f"{where}: meta.dptool.rule must be a mapping")
    unknown = sorted(set(decl) - set(RULE_KEYS))
    if unknown:
        raise DptoolError(f"{where}: meta.dptool.rule.{unknown[0]} is not a rule key ({', '.join(RULE_KEYS)})")
    rule_type = decl.get("type")
    if rule_type not in RULE_TYPES:
        raise DptoolError(f"{where}: meta.dptool.rule.type is {rule_type!r}; expected one of {', '.join(RULE_TYPES)}")
    modifies = decl.get("modifies") or []
    if isinstance(modifies, str):
        modifies = [modifies]
    if not modifies:
        raise DptoolError(f"{where}: meta.dptool.rule.modifies names no metric")
    applies_when = decl.get("applies_when") or {}
    if not isinstance(applies_when, dict):
        raise DptoolError(f"{where}: meta.dptool.rule.applies_when must map a dimension to a value")
    rule_id = name.removeprefix("rule__")
    document = _rule_document(macro, docs, documents)
    if len(document.split()) < 20:
        raise DptoolError(f"{where}: description (the rule document) is missing or shorter than 20 words; write it "
                          f"in a docs block {{% docs {name} %}} (description: '{{{{ doc(\"{name}\") }}}}'), or as "
                          f"{rule_id}.md in a folder given to --rules-dir")
    catalog.rules[rule_id] = Rule(
        id=rule_id,
        unique_id=uid,
        domain="",  # set from the metrics it modifies in _check_references
        title=str(decl.get("title") or rule_id.replace("_", " ").title()),
        type=rule_type,
        effective_from=str(decl.get("effective_from") or ""),
        applies_when={str(k): str(v) for k, v in applies_when.items()},
        modifies=tuple(modifies),
        document=document,
        parses=parses(uid, macros),
        constants=constant_columns(macro.get("macro_sql") or ""),
    )


_DOC_CALL = re.compile(r"""\{\{\s*doc\(\s*["']([^"']+)["']\s*\)\s*\}\}""")


def _rule_document(macro: dict, docs: dict, documents: dict[str, str]) -> str:
    """The macro's description; else its markdown file from --rules-dir; else a docs block named after it."""
    text = macro.get("description") or ""
    # Macro descriptions keep their doc() call in some dbt versions: resolve it from the docs blocks.
    match = _DOC_CALL.fullmatch(text.strip())
    if match:
        block = next((d for d in docs.values() if d.get("name") == match.group(1)), None)
        text = block.get("block_contents", "") if block else ""
    if not text.strip():
        rule_id = macro["name"].removeprefix("rule__")
        text = documents.get(rule_id) or ""
        if not text.strip():
            # a docs block named after the rule: the user's, else the one dptool wrote from --rules-dir last time
            names = (macro["name"], rule_id)
            blocks = sorted((("dptool_semantic/" in (d.get("original_file_path") or "")), uid, d)
                            for uid, d in docs.items() if d.get("name") in names)
            text = blocks[0][2].get("block_contents", "") if blocks else ""
    return text.strip()


def _check_references(catalog: Catalog, manifest: dict, manifest_path: str) -> None:
    macros = manifest.get("macros", {})
    for rule_id, rule in list(catalog.rules.items()):
        where = _where(macros.get(rule.unique_id, {}))
        modifies = tuple(dict.fromkeys(_metric_named(catalog, m, where) for m in rule.modifies))
        rule = catalog.rules[rule_id] = replace(rule, modifies=modifies)
        for metric_id in rule.modifies:
            if metric_id not in catalog.metrics:
                raise DptoolError(f"{where}: meta.dptool.rule.modifies names unknown metric {metric_id!r}")
        for column in rule.applies_when:
            if not any(d.column == column for d in catalog.dimensions.values()):
                raise DptoolError(f"{where}: meta.dptool.rule.applies_when names {column!r}, which is no dimension")
        domain = catalog.metrics[rule.modifies[0]].domain
        catalog.rules[rule_id] = Rule(**{**rule.__dict__, "domain": domain})
    for metric in catalog.metrics.values():
        for component in metric.components:
            if component not in catalog.metrics:
                raise DptoolError(
                    f"{_where(manifest['nodes'].get(metric.unique_id, {}))}: meta.dptool.metric.components names "
                    f"unknown metric {component!r}"
                )
    _check_composites(catalog, manifest)
    if not catalog.metrics:
        skipped = getattr(catalog.semantic, "skipped", None) or {}
        also = f" ({len(skipped)} semantic-layer metrics were skipped: {', '.join(sorted(skipped))})" if skipped else ""
        raise DptoolError(
            f"{manifest_path}: no metric declared{also}; declare metrics in the dbt semantic layer (semantic_models "
            "with measures, and simple, ratio or derived metrics), or add `config: {meta: {dptool: {metric: {value: "
            "'avg(x)'}}}}` to a model at the metric's row grain (see `dptool init`)"
        )


def _check_labels(catalog: Catalog, manifest: dict) -> None:
    """No two metrics share a label as a reader sees it (`reader_key`: case, spacing, hyphens and fullwidth forms
    aside), across domains too: kb/metrics.md is one catalog with a `## <label>` section per metric, and a question
    names a metric by its label alone ("our Cancellation Rate"), never by its domain, so an agent could not tell
    which of the two it asks about. Nor do two dimensions of one metric (`_check_dimension_labels`)."""
    seen: dict[str, Metric] = {}
    for _, metric in sorted(catalog.metrics.items()):
        key = reader_key(metric.label)
        other = seen.setdefault(key, metric)
        if other is not metric:
            first, second = (_metric_where(catalog, manifest, m) for m in (other, metric))
            raise DptoolError(f"{first} and {second} both have the label {metric.label!r}: kb/metrics.md would "
                              "hold two sections of that name and a question could not say which it means; give each "
                              "its own meta.dptool.metric.label (the semantic layer's: the metric's label)")
    _check_dimension_labels(catalog)


def _check_dimension_labels(catalog: Catalog) -> None:
    """No two dimensions a metric is broken down or sliced by read the same: "by Ａctive" and "by active" would
    name one of two columns, and a reader could not tell which."""
    for _, metric in sorted(catalog.metrics.items()):
        seen: dict[str, Dimension] = {}
        for dim in catalog.dimensions_of(metric):
            other = seen.setdefault(reader_key(dim.label), dim)
            if other is not dim:
                raise DptoolError(f"{other.where} ({other.column}) and {dim.where} ({dim.column}) both have the label "
                                  f"{dim.label!r} as a reader sees it ({other.label!r}): a question on "
                                  f"{metric.id} by or for it could not say which column it means; give each its own "
                                  "label (the column's meta.dptool.label, or the semantic layer dimension's)")


def _metric_where(catalog: Catalog, manifest: dict, metric: Metric) -> str:
    """Where a metric is declared: its model's properties file and unique id, or the semantic layer's metric."""
    node = (manifest.get("nodes") or {}).get(metric.unique_id)
    layer = getattr(catalog.semantic, "metrics", None) or {}
    if metric.id in layer and (node is None or semantic.is_generated(node)):
        name = layer[metric.id].metric
        found = [n for n in (manifest.get("metrics") or {}).values() if n.get("name") == name]
        if found:
            return _where(found[0])
        return f"{layer[metric.id].semantic_model}: metric {name}"
    return _where(node or {"unique_id": metric.unique_id})


def _metric_named(catalog: Catalog, name: str, where: str) -> str:
    """The catalog metric a rule's `modifies` names: by dptool's id, or by the semantic layer's name of a metric
    dptool declares under another id (`orders` -> `orders_metric`). Neither is one error that lists both."""
    if name in catalog.metrics:
        return name
    layer = catalog.semantic
    found = layer.dptool_id(name) if layer is not None else None
    if found in catalog.metrics:
        return found
    skipped = (getattr(layer, "skipped", None) or {}).get(name)
    if skipped:
        raise DptoolError(f"{where}: meta.dptool.rule.modifies names {name!r}, a semantic-layer metric dptool skips: "
                          f"{skipped}")
    if not getattr(layer, "metrics", None):
        raise DptoolError(f"{where}: meta.dptool.rule.modifies names unknown metric {name!r}")
    semantic_name = {m.name: m.metric for m in layer.metrics.values() if m.metric != m.name}
    known = ", ".join(f"{m} (semantic layer: {semantic_name[m]})" if m in semantic_name else m
                      for m in sorted(catalog.metrics))
    raise DptoolError(f"{where}: meta.dptool.rule.modifies names unknown metric {name!r}; a rule names a metric by "
                      f"dptool's id or its semantic-layer name, and the metrics are: {known or 'none'}")


# --- the dbt semantic layer's side -----------------------------------------------------------------------

def _extend_with_semantic_layer(catalog: Catalog, manifest: dict, relation_columns=None) -> None:
    """Add the semantic layer's tables, dimensions, joins and metrics to a catalog being loaded.

    Declarations under meta.dptool win: a table, dimension or metric the catalog already has is kept.
    The translation (and what was skipped, and why) is kept as `catalog.semantic`.
    """
    layer = semantic.read_layer(manifest, catalog.project, relation_columns)
    catalog.semantic = layer
    used = {m.semantic_model for m in layer.metrics.values()}
    used |= {j for m in layer.metrics.values() for j in _joined_models(m, layer)}
    for name in sorted(used):
        model = layer.models[name]
        declared = catalog.tables.get(model.node_id)
        if declared is not None and declared.domain != model.domain and not _dptool(
                manifest.get("nodes", {}).get(model.node_id, {})).get("domain"):
            # `table: true` on a semantic model's node: one table, in the domain of the metrics that read it
            catalog.tables[model.node_id] = replace(declared, domain=model.domain)
        if model.node_id not in catalog.tables:
            catalog.tables[model.node_id] = Table(model.node_id, model.table_name, model.domain, model.relation_name,
                                                  model.description, dict(model.column_docs))
    nodes = manifest.get("nodes", {})
    for node_id, column, kind, label in layer.dimensions:
        if _dptool(((nodes.get(node_id) or {}).get("columns") or {}).get(column) or {}).get("dimension") is False:
            continue  # the node's column says it is no dimension
        if node_id in catalog.tables:
            dim = Dimension(node_id, column, kind, label, f"{_where(nodes.get(node_id) or {})} (semantic layer)")
            catalog.dimensions.setdefault(dim.id, dim)
    for from_node, from_col, to_node, to_col in layer.joins:
        if from_node in catalog.tables and to_node in catalog.tables:
            join = Join(from_node, from_col, to_node, to_col)
            if join not in catalog.joins:
                catalog.joins.append(join)
    for name, m in sorted(layer.metrics.items()):
        model = layer.models[m.semantic_model]
        d = m.decl
        catalog.metrics[name] = Metric(
            id=name, unique_id=f"model.{catalog.project}.{name}", domain=model.domain, label=d["label"],
            value=d["value"], unit=d["unit"], format=d["format"], formula=d["formula"], tier=d["tier"],
            grain=d["grain"], description=m.description, components=m.components, tables=m.tables,
            columns=m.column_names, semantic=True,
        )
        columns = catalog.metrics[name].columns
        where = f"{m.semantic_model}: metric {m.metric}"
        # a composite's period is its inputs' (_check_composites)
        period = "" if m.components else period_dimension(catalog, m.tables, columns, d.get("period"), where)
        doc = catalog.tables[catalog.dimensions[period].table].columns.get(catalog.dimensions[period].column, "") \
            if period else ""
        catalog.metrics[name] = replace(catalog.metrics[name], period=period, period_doc=doc.strip(),
                                        duration=str(d.get("duration") or "").strip(),
                                        entity=str(d.get("entity") or "") if d.get("entity") in columns else "")


def _joined_models(m: semantic.MetricModel, layer: semantic.SemanticLayer) -> list[str]:
    by_node = {model.node_id: name for name, model in layer.models.items()}
    return [by_node[t] for t in m.tables if t in by_node]
