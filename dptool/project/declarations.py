"""What dptool reads from a manifest, and what each declaration under `meta.dptool` may hold.

A declaration is a mapping described by a `Schema` (key -> `Key`: the kind of value it takes, whether it
is required); a `Kind` says what values it accepts, in the words an error uses. Adding a key is one line
in a schema below. `check` runs once when the catalog is loaded, before anything reads the manifest:
the manifest's shape, then every `meta.dptool` of every node, source, macro, column and semantic-layer
object, then the relationships tests that declare joins. Each problem is one DptoolError line naming
the file, the node and the key.

The keys a metric or rule declaration may hold come from the catalog (`metric_keys`, `rule_keys`): a
key listed there and absent from a schema here is accepted untyped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import yaml

from dptool.errors import DptoolError


@dataclass(frozen=True)
class Kind:
    """The values a key accepts, and what an error says it expects."""

    expected: str
    accepts: Callable[[Any], bool]
    items: Kind | None = None  # a list's items (checked one by one)
    values: Kind | None = None  # a mapping's values, under keys the user chooses
    schema: Schema | None = None  # a mapping's keys, fixed
    nested: bool = field(init=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "nested", any(k is not None for k in (self.items, self.values, self.schema)))


@dataclass(frozen=True)
class Key:
    kind: Kind
    required: bool = False
    hint: str = ""  # what the key is for, said when it is missing or of the wrong kind


@dataclass(frozen=True)
class Schema:
    noun: str  # "is not a <noun> key"
    keys: dict[str, Key] = field(default_factory=dict)
    closed: bool = True  # other keys are errors


def _text(value) -> bool:
    # YAML numbers read as text where text is meant (tier: 1); mappings, lists and true/false do not
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _iso_date(value) -> bool:
    if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _one_of(*choices: str) -> Kind:
    return Kind(f"one of {', '.join(choices)}", lambda v: isinstance(v, str) and v in choices)


def _names(what: str) -> Kind:
    """One name, or a list of names."""
    name = Kind(f"a {what} name", lambda v: isinstance(v, str) and bool(v.strip()))
    return Kind(f"a {what} name or a list of {what} names", lambda v: isinstance(v, str | list), items=name)


TEXT = Kind("text", _text)
SQL = Kind("a SQL string", lambda v: isinstance(v, str))
FLAG = Kind("true or false", lambda v: isinstance(v, bool))
DATE = Kind("a date as YYYY-MM-DD (e.g. '2017-01-01')", _iso_date)
MAPPING = Kind("a mapping", lambda v: isinstance(v, dict))
SQL_FILTERS = Kind("a SQL string or a list of them", lambda v: isinstance(v, str | list), items=SQL)

COMPONENT = Schema("component", {
    "metric": Key(Kind("a metric name", lambda v: isinstance(v, str) and bool(v.strip())), required=True),
    "alias": Key(TEXT, hint="the name the composite's value uses for this input"),
    "where": Key(SQL_FILTERS, hint="a filter of this input alone, as the semantic layer's input filters"),
})
# a composite's inputs: names, or {metric, alias, where} for an input with its own filter (dbt's derived metrics)
_COMPONENT = Kind("a metric name or {metric, alias, where}",
                  lambda v: (isinstance(v, str) and bool(v.strip())) or isinstance(v, dict), schema=COMPONENT)
COMPONENTS = Kind("a metric name, or a list of metric names or {metric, alias, where}",
                  lambda v: isinstance(v, str | list | dict), items=_COMPONENT)

DIMENSION_KINDS = ("temporal", "spatial", "categorical")
RULE_TYPES = ("definitional", "exclusionary", "temporal", "conditional", "privacy", "override")
METRIC_FORMATS = ("number", "percent", "currency")

METRIC = Schema("metric", {
    "label": Key(TEXT, hint="the metric's name in questions, e.g. Average Delivery Time"),
    "value": Key(SQL, required=True, hint="the aggregate SQL, e.g. avg(delivery_days)"),
    "unit": Key(TEXT, hint="e.g. days, BRL, share of orders"),
    "format": Key(_one_of(*METRIC_FORMATS)),
    "formula": Key(TEXT, hint="the formula in words, for the metric catalog"),
    "tier": Key(TEXT, hint="e.g. L1"),
    "components": Key(COMPONENTS, hint="the metrics a composite is computed from"),
    "grain": Key(TEXT, hint="what one row is, plural, e.g. delivered orders"),
    "period": Key(TEXT, hint="the date that places a row in a period, as table.column, "
                             "e.g. orders.order_purchase_timestamp"),
    "duration": Key(TEXT, hint="how the durations the metric measures are counted"),
    "entity": Key(TEXT, hint="the column one row belongs to, counted by the minimum support, e.g. sale_id"),
    "selection": Key(MAPPING, hint="whom the metric selects and over which rows: {members: <who is picked>, window: "
                                   "history | period | <the window in words>}"),
})
RULE = Schema("rule", {
    "title": Key(TEXT),
    "type": Key(_one_of(*RULE_TYPES), required=True),
    "effective_from": Key(DATE),
    "applies_when": Key(Kind("a mapping of a dimension column to one value, e.g. {customer_state: SP}",
                             lambda v: isinstance(v, dict),
                             values=Kind("one value (text or a number)", _text))),
    "modifies": Key(_names("metric"), required=True, hint="the metric or metrics the rule changes"),
})
QUESTION = Schema("question", {
    "question": Key(TEXT, required=True),
    "sql": Key(SQL, required=True, hint="the query over the tables that answers it"),
    "dp_sql": Key(SQL, hint="the query over the data product that answers it"),
})
DATA_PRODUCT = Schema("data_product", {
    "id": Key(TEXT),
    "request": Key(TEXT, hint="the data product request, 2-4 sentences"),
    "questions": Key(Kind("a list of {question, sql}", lambda v: isinstance(v, list),
                          items=Kind("a mapping {question, sql}", lambda v: isinstance(v, dict), schema=QUESTION))),
    "created_by": Key(TEXT),
})
DIMENSION = Key(Kind(f"one of {', '.join(DIMENSION_KINDS)}, or false (not a dimension)",
                     lambda v: v is False or (isinstance(v, str) and v in DIMENSION_KINDS)))

# meta.dptool of each kind of node (metric and rule declarations are checked against METRIC and RULE after)
_TABLE_KEYS = {"table": Key(FLAG, hint="whether agents may query it"), "domain": Key(TEXT)}
MODEL = Schema("model", {
    **_TABLE_KEYS,
    "metric": Key(Kind("a mapping with at least `value`", lambda v: isinstance(v, dict))),
    "data_product": Key(Kind("a mapping {id, request, questions}", lambda v: isinstance(v, dict),
                             schema=DATA_PRODUCT)),
    "task": Key(MAPPING, hint="written by `dptool generate` on gold models"),
    "semantic": Key(MAPPING, hint="written by `dptool generate` on the semantic layer's metric models"),
    "column_provenance": Key(MAPPING, hint="written by `dptool dp provenance` on data-product models"),
})
SEED = Schema("seed", dict(_TABLE_KEYS))
SOURCE = Schema("source", dict(_TABLE_KEYS))
SNAPSHOT = Schema("snapshot", dict(_TABLE_KEYS))
MACRO = Schema("macro", {"rule": Key(Kind("a mapping {title, type, effective_from, applies_when, modifies}",
                                          lambda v: isinstance(v, dict)))})
COLUMN = Schema("column", {
    "dimension": DIMENSION,
    "label": Key(TEXT, hint="the dimension's name in questions"),
    "provenance": Key(MAPPING, hint="written by an earlier `dptool dp provenance`; now on the model"),
})
SEMANTIC_METRIC = Schema("semantic metric", {"metric": Key(MAPPING)})
SEMANTIC_DIMENSION = Schema("semantic dimension", {"dimension": DIMENSION})
SEMANTIC_MODEL = Schema("semantic model")
NODE_SCHEMAS = {"model": MODEL, "seed": SEED, "source": SOURCE, "snapshot": SNAPSHOT, "macro": MACRO,
                "semantic_model": SEMANTIC_MODEL, "metric": SEMANTIC_METRIC}
DPTOOL = "a mapping of dptool's keys, e.g. {table: true}"

# --- the manifest's shape: the fields dptool reads, each null or of its kind ------------------------------------

_OPTIONAL_TEXT = Kind("text", lambda v: v is None or isinstance(v, str))
_OPTIONAL_MAPPING = Kind("a mapping", lambda v: v is None or isinstance(v, dict))
_OPTIONAL_LIST = Kind("a list", lambda v: v is None or isinstance(v, list))
_NAME = Kind("text", lambda v: isinstance(v, str) and bool(v))
_NODE_FIELDS = {
    **{k: Key(_OPTIONAL_TEXT) for k in ("resource_type", "unique_id", "alias", "identifier", "relation_name",
                                        "description", "original_file_path", "patch_path", "path", "raw_code",
                                        "compiled_code", "attached_node", "column_name", "package_name")},
    **{k: Key(_OPTIONAL_MAPPING) for k in ("meta", "config", "test_metadata")},
    **{k: Key(_OPTIONAL_LIST) for k in ("fqn", "refs", "sources")},
    "columns": Key(Kind("a mapping of column name to column", lambda v: v is None or isinstance(v, dict),
                        values=Kind("a mapping (a column)", lambda v: isinstance(v, dict)))),
    "depends_on": Key(Kind("a mapping {nodes, macros}", lambda v: v is None or isinstance(v, dict),
                           schema=Schema("depends_on", {"nodes": Key(_OPTIONAL_LIST), "macros": Key(_OPTIONAL_LIST)},
                                         closed=False))),
}
NODE = Schema("node", {"name": Key(_NAME, required=True), **_NODE_FIELDS}, closed=False)
DOC = Schema("doc", {"name": Key(_OPTIONAL_TEXT), "block_contents": Key(_OPTIONAL_TEXT)}, closed=False)
SEMANTIC_OBJECT = Schema("semantic-layer object", {
    "name": Key(_NAME, required=True), **_NODE_FIELDS,
    **{k: Key(Kind("a list of mappings", lambda v: v is None or isinstance(v, list),
                   items=Kind("a mapping", lambda v: isinstance(v, dict))))
       for k in ("entities", "dimensions", "measures")},
    "type_params": Key(_OPTIONAL_MAPPING), "node_relation": Key(_OPTIONAL_MAPPING),
}, closed=False)
SECTIONS = {"nodes": NODE, "sources": NODE, "macros": NODE, "docs": DOC, "semantic_models": SEMANTIC_OBJECT,
            "metrics": SEMANTIC_OBJECT}
REWRITE = "run `dbt parse` to write it again"


def check(manifest, manifest_path: str, *, metric_keys: Iterable[str], rule_keys: Iterable[str]) -> None:
    """Raise DptoolError for the first malformed part of a manifest or of a declaration in it."""
    check_manifest(manifest, manifest_path)
    for section in ("nodes", "sources", "macros", "semantic_models", "metrics"):
        for _, node in sorted((manifest.get(section) or {}).items()):
            _check_node(node, tuple(metric_keys), tuple(rule_keys))
    _check_relationships(manifest)


def check_manifest(manifest, manifest_path: str) -> None:
    """Raise DptoolError unless the manifest has the shape dbt writes, in the fields dptool reads."""
    if not isinstance(manifest, dict):
        raise DptoolError(f"{manifest_path}: not a dbt manifest: it holds {shown(manifest)}, where dbt writes a "
                          f"mapping of nodes, sources and macros; {REWRITE}")
    if not isinstance(manifest.get("metadata") or {}, dict):
        raise DptoolError(f"{manifest_path}: metadata is {shown(manifest['metadata'])}; expected a mapping; {REWRITE}")
    for section, schema in SECTIONS.items():
        entries = manifest.get(section)
        if entries is None:
            continue
        if not isinstance(entries, dict):
            raise DptoolError(f"{manifest_path}: {section} is {shown(entries)}; expected a mapping of unique id to "
                              f"{schema.noun}; {REWRITE}")
        for uid, node in entries.items():
            try:
                if not isinstance(node, dict):
                    raise DptoolError(f"{manifest_path}: {section}[{uid!r}] is {shown(node)}; expected a mapping "
                                      f"(a dbt {schema.noun})")
                check_declaration(node, schema, f"{manifest_path}: {section}[{uid!r}]", "")
            except DptoolError as exc:
                raise DptoolError(f"{exc}; {REWRITE}") from None


def _where(node: dict) -> str:
    """`file: unique id` of a node: its properties file when it has one, else the file that defines it."""
    path = node.get("patch_path") or node.get("original_file_path") or node.get("path") or "?"
    return f"{path.split('://')[-1]}: {node.get('unique_id', '?')}"


def shown(value) -> str:
    """A value as its YAML reads, cut short."""
    if value is None:
        text = "null"
    elif isinstance(value, str):
        text = repr(value)
    else:
        text = yaml.safe_dump(value, default_flow_style=True, width=10_000, allow_unicode=True).strip()
        text = text.removesuffix("\n...").strip()
    return text if len(text) <= 60 else text[:57] + "..."


def check_declaration(decl: dict, schema: Schema, place: str, path: str, *, allowed: Iterable[str] | None = None,
                      required: bool = True) -> None:
    """Check one declaration against its schema; `allowed` (default: the schema's keys) lists the keys it may hold."""
    keys = schema.keys if allowed is None else tuple(allowed)
    if schema.closed:
        unknown = sorted(str(k) for k in decl if k not in keys)
        if unknown:
            known = ", ".join(keys) or "dptool reads none here"
            raise DptoolError(f"{place}: {_join(path, unknown[0])} is not a {schema.noun} key ({known})")
    # a closed schema is checked in its own order; an open one (a manifest node, with dozens of keys dptool does
    # not read) only in the keys it has, and its required ones
    names = schema.keys if schema.closed else [*(n for n in decl if n in schema.keys),
                                                *(n for n, k in schema.keys.items() if k.required and n not in decl)]
    for name in names:
        key = schema.keys[name]
        value = decl.get(name)
        if value is None and not key.required:
            continue
        if not value and not isinstance(value, bool | int | float):  # absent: null, '', [] or {}
            if key.required and required and name in keys:
                said = "is missing" if value is None or value == "" else "is empty"
                why = f" ({key.hint})" if key.hint else f"; expected {key.kind.expected}"
                raise DptoolError(f"{place}: {_join(path, name)} {said}{why}")
            continue
        if not key.kind.accepts(value) or key.kind.nested:  # the path is spelled out only when needed
            _check(value, key.kind, _join(path, name), place, key.hint)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _check(value, kind: Kind, path: str, place: str, hint: str = "") -> None:
    if not kind.accepts(value):
        said = f"{place}: {path} is {shown(value)}" if path else f"{place} is {shown(value)}"
        raise DptoolError(f"{said}; expected {kind.expected}" + (f" ({hint})" if hint else ""))
    if kind.items is not None and isinstance(value, list):
        for i, item in enumerate(value):
            _check(item, kind.items, f"{path}[{i}]", place)
    if kind.values is not None and isinstance(value, dict):
        for k, v in value.items():
            if not kind.values.accepts(v) or kind.values.nested:
                _check(v, kind.values, _join(path, str(k)), place)
    if kind.schema is not None and isinstance(value, dict):
        check_declaration(value, kind.schema, place, path)


def _meta(node: dict) -> dict:
    # where catalog.py reads it: the node's meta, else its config's (dbt writes both)
    return node.get("meta") or (node.get("config") or {}).get("meta") or {}


def _check_node(node: dict, metric_keys: tuple[str, ...], rule_keys: tuple[str, ...]) -> None:
    place = _where(node)
    kind = node.get("resource_type") or ""
    schema = NODE_SCHEMAS.get(kind)
    if schema is not None:
        decl = _dptool(_meta(node), "meta.dptool", place)
        if decl:
            check_declaration(decl, schema, place, "meta.dptool")
            if kind == "model" and isinstance(decl.get("metric"), dict):
                check_declaration(decl["metric"], METRIC, place, "meta.dptool.metric", allowed=metric_keys)
            if kind == "macro" and isinstance(decl.get("rule"), dict):
                check_declaration(decl["rule"], RULE, place, "meta.dptool.rule", allowed=rule_keys)
            if kind == "metric" and isinstance(decl.get("metric"), dict):  # semantic.py says which keys it takes
                check_declaration(decl["metric"], Schema("metric", METRIC.keys, closed=False), place,
                                  "meta.dptool.metric", required=False)
    for name, column in sorted((node.get("columns") or {}).items()):
        path = f"columns.{name}.meta.dptool"
        decl = _dptool(_meta(column), path, place)
        if decl:
            check_declaration(decl, COLUMN, place, path)
    for dim in (node.get("dimensions") or []) if kind == "semantic_model" else []:
        path = f"dimensions.{dim.get('name')}.config.meta.dptool"
        meta = (dim.get("config") or {}).get("meta") or dim.get("meta") or {}
        if not isinstance(meta, dict):
            raise DptoolError(f"{place}: dimensions.{dim.get('name')}.config.meta is {shown(meta)}; expected a mapping")
        decl = _dptool(meta, path, place)
        if decl:
            check_declaration(decl, SEMANTIC_DIMENSION, place, path)


def _dptool(meta: dict, path: str, place: str) -> dict:
    value = meta.get("dptool")
    if value is None or value == "":
        return {}
    if not isinstance(value, dict):
        raise DptoolError(f"{place}: {path} is {shown(value)}; expected {DPTOOL}")
    return value


def _check_relationships(manifest: dict) -> None:
    """A relationships test on a table whose `to` names nothing: dbt only warns and disables the test, and the
    join dptool reads from it would be lost without a word (every task through it with it)."""
    nodes = manifest.get("nodes") or {}
    sources = manifest.get("sources") or {}
    tables = {uid for uid, n in (*nodes.items(), *sources.items()) if _dptool_of(n).get("table")}
    # dbt files such a test under `disabled` (or, on a full parse, among the nodes, disabled); one the user
    # disabled says so in its unrendered config, and is theirs to keep
    disabled = [n for versions in (manifest.get("disabled") or {}).values() if isinstance(versions, list)
                for n in versions if isinstance(n, dict)] if isinstance(manifest.get("disabled"), dict) else []
    enabled_names, disabled_names = _relation_names(nodes.values()), _relation_names(disabled)
    source_names = {(n.get("source_name"), n.get("name")) for n in sources.values()}
    for test in sorted([*nodes.values(), *disabled], key=lambda n: str(n.get("unique_id"))):
        meta = test.get("test_metadata") or {}
        if test.get("resource_type") != "test" or meta.get("name") != "relationships" or meta.get("namespace"):
            continue
        if test.get("attached_node") not in tables or (test.get("unrendered_config") or {}).get("enabled") is False:
            continue
        refs = [r for r in test.get("refs") or [] if not _ref_found(r, enabled_names)]
        sources_missing = [s for s in test.get("sources") or []
                           if not (isinstance(s, list) and len(s) == 2 and tuple(s) in source_names)]
        if refs or sources_missing:
            kwargs = meta.get("kwargs") or {}
            column = kwargs.get("column_name") or test.get("column_name") or "?"
            file = (test.get("original_file_path") or "?").split("://")[-1]
            what, fix = ("names a disabled model", "enable it") if any(_ref_found(r, disabled_names) for r in refs) \
                else ("names no model, seed, snapshot or source of the project", "fix `to`")
            raise DptoolError(
                f"{file}: {test['attached_node']}: columns.{column}: the relationships test's "
                f"`to: {kwargs.get('to')}` {what}; dbt disabled the test, and with it the join dptool reads from "
                f"it: {fix}, or remove the test"
            )


def _relation_names(nodes) -> dict[str, set[str | None]]:
    """Model, seed and snapshot names -> the packages that have one by that name."""
    found: dict[str, set[str | None]] = {}
    for n in nodes:
        if n.get("resource_type") in ("model", "seed", "snapshot"):
            found.setdefault(n.get("name"), set()).add(n.get("package_name"))
    return found


def _dptool_of(node: dict) -> dict:
    value = _meta(node).get("dptool")
    return value if isinstance(value, dict) else {}


def _ref_found(ref, names: dict[str, set[str | None]]) -> bool:
    if isinstance(ref, dict):
        package, name = ref.get("package"), ref.get("name")
    elif isinstance(ref, list) and ref:
        package, name = (ref[0], ref[-1]) if len(ref) > 1 else (None, ref[0])
    else:
        return True  # a shape dptool does not know: dbt's own check stands
    return name in names and (package is None or package in names[name])
