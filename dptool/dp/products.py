"""Data products read from dbt's artifacts: the manifest's declarations, compiled SQL and catalog.json.

A data product is one or more models with `meta.dptool.data_product: {id, request, questions}`; models with
the same `id` (default: the model's name) form one data product and one of them holds the request. Each
model's lineage (dptool.dp.lineage) decides which of its columns are non-derived (one column of the
model's own table, as it is) and which are derived, with their provenance over the agent-visible tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import sqlglot

from dptool.dp import dpjson
from dptool.dp.lineage import (
    ColumnLineage,
    Edge,
    UniqueColumns,
    model_lineage,
    qualify_query,
    relation_key,
    rename_tables,
)
from dptool.errors import DptoolError
from dptool.project.catalog import Catalog, load_catalog

QUESTION_DIALECT = "duckdb"  # questions' SQL in meta is read as DuckDB SQL, then transpiled to the target's
# Where the part `dptool dp provenance` writes starts: in a column's description, in a model's description.
PROVENANCE_MARK = "Provenance:"
PRODUCT_MARKS = ("### Data product request", "Part of data product ")
_EARLIER_MARKS = ("**Provenance**",)  # what earlier versions wrote, replaced on the next run


@dataclass(frozen=True)
class ModelLineage:
    """One data-product model and the lineage of its columns, in select order."""

    unique_id: str
    name: str
    dp_id: str
    properties_path: str  # the properties file declaring it, relative to the project ("" when none)
    sql_path: str  # its SQL file, relative to the project
    columns: dict[str, ColumnLineage]
    holds_request: bool = False  # the model that declares the data product's request and questions


@dataclass
class ProjectProducts:
    document: dpjson.Document
    models: dict[str, ModelLineage] = field(default_factory=dict)  # by unique_id
    table_names: dict[str, str] = field(default_factory=dict)  # relation key -> table name


def human_description(text: str) -> str:
    """A column's or a model's description without the part `dptool dp provenance` wrote."""
    for mark in (PROVENANCE_MARK, *PRODUCT_MARKS, *_EARLIER_MARKS):
        text = text.split(mark)[0]
    return text.strip()


def warehouse_schema(catalog_json: dict) -> dict:
    """{database: {schema: {relation: {column: type}}}} of every relation in catalog.json."""
    schema: dict = {}
    for node in sorted({**catalog_json.get("nodes", {}), **catalog_json.get("sources", {})}.values(),
                       key=lambda n: (n["metadata"].get("database") or "", n["metadata"]["schema"],
                                      n["metadata"]["name"])):
        meta = node["metadata"]
        columns = sorted(node.get("columns", {}).values(), key=lambda c: c.get("index", 0))
        schema.setdefault(meta.get("database") or "", {}).setdefault(meta["schema"], {})[meta["name"]] = {
            c["name"]: c.get("type") or "unknown" for c in columns}
    return schema


def databases(catalog: Catalog, catalog_json: dict | None) -> dict[str, dpjson.Database]:
    """One DP-Bench database per domain: its agent-visible tables, typed from catalog.json when there."""
    typed = {**(catalog_json or {}).get("nodes", {}), **(catalog_json or {}).get("sources", {})}
    by_domain: dict[str, list[dpjson.Table]] = {}
    for uid, table in sorted(catalog.tables.items(), key=lambda kv: kv[1].name):
        actual = sorted(typed.get(uid, {}).get("columns", {}).values(), key=lambda c: c.get("index", 0))
        if actual:
            columns = tuple(dpjson.Column(c["name"], c.get("type") or "", table.columns.get(c["name"], ""))
                            for c in actual)
        else:  # not built yet: the documented columns, untyped
            columns = tuple(dpjson.Column(name, "", text) for name, text in table.columns.items())
        by_domain.setdefault(table.domain, []).append(dpjson.Table(table.name, columns, table.description))
    result = {}
    for domain, tables in sorted(by_domain.items()):
        fks = tuple(dpjson.ForeignKey(catalog.tables[j.from_table].name, j.from_column,
                                      catalog.tables[j.to_table].name, j.to_column)
                    for j in catalog.joins
                    if catalog.tables[j.from_table].domain == domain and catalog.tables[j.to_table].domain == domain)
        result[domain] = dpjson.Database(domain, tuple(tables), fks)
    return result


def unique_columns(manifest: dict, dialect: str) -> UniqueColumns:
    """(relation key, column) of every column dbt proves unique: a `unique` test without a `where`, or a
    `unique` or `primary_key` constraint."""
    nodes = {**manifest.get("nodes", {}), **manifest.get("sources", {})}

    def key(uid: str | None) -> str | None:
        relation = (nodes.get(uid or "") or {}).get("relation_name")
        return relation_key(sqlglot.to_table(relation, dialect=dialect)) if relation else None

    found = set()
    for node in nodes.values():
        meta = node.get("test_metadata") or {}
        if node.get("resource_type") == "test" and meta.get("name") == "unique" and not meta.get("namespace"):
            where = (node.get("config") or {}).get("where")
            column = node.get("column_name") or (meta.get("kwargs") or {}).get("column_name")
            if not where and column and key(node.get("attached_node")):
                found.add((key(node["attached_node"]), column.strip('"').lower()))
        for column in (node.get("columns") or {}).values():
            if any(c.get("type") in ("unique", "primary_key") for c in column.get("constraints") or []) and key(
                    node.get("unique_id")):
                found.add((key(node["unique_id"]), column["name"].lower()))
    return frozenset(found)


def declaration(node: dict) -> dict | None:
    """A node's meta.dptool.data_product, or None."""
    meta = node.get("meta") or node.get("config", {}).get("meta") or {}
    decl = (meta.get("dptool") or {}).get("data_product") if isinstance(meta.get("dptool"), dict) else None
    return decl if isinstance(decl, dict) else None


def load_products(manifest: dict, catalog_json: dict, dialect: str, *, created: bool | None = False,
                  manifest_path: str = "manifest.json") -> ProjectProducts:
    """The project's data products, their models' lineage and the databases they are built from.

    `created` picks the data products `dptool dp create` wrote (True), the hand-made ones (False, the gold
    of a benchmark), or both (None).
    """
    catalog = load_catalog(manifest, manifest_path)
    schema = warehouse_schema(catalog_json)
    unique = unique_columns(manifest, dialect)
    spelling = _spelling(schema)
    nodes = manifest.get("nodes", {})
    keys = {uid: relation_key(sqlglot.to_table(t.relation_name, dialect=dialect)) for uid, t in catalog.tables.items()}
    names = {keys[uid]: t.name for uid, t in catalog.tables.items()}
    domains = {keys[uid]: t.domain for uid, t in catalog.tables.items()}

    groups: dict[str, list[tuple[str, dict, dict]]] = {}
    for uid, node in sorted(nodes.items()):
        decl = declaration(node)
        if node.get("resource_type") != "model" or decl is None:
            continue
        if created is not None and bool(decl.get("created_by")) != created:
            continue
        groups.setdefault(str(decl.get("id") or node["name"]), []).append((uid, node, decl))

    result = ProjectProducts(dpjson.Document(dialect=dialect), table_names=names)
    result.document.databases = databases(catalog, catalog_json)
    for dp_id, members in sorted(groups.items()):
        request, questions = _request(dp_id, members)
        tables = _Tables(names, dialect)
        reached: set[str] = set()
        for uid, node, decl in members:
            columns = _lineage_of(uid, node, nodes, schema, dialect, catalog, manifest_path, unique, spelling)
            result.models[uid] = ModelLineage(uid, node["name"], dp_id, _properties_path(node),
                                              node.get("original_file_path") or "", columns, bool(decl.get("request")))
            for name, col in columns.items():
                reached |= {domains[rel] for rel, _ in col.reads if rel in domains}
                tables.add(node, name, col)
        if len(reached) != 1:
            what = (f"reads tables of several domains ({', '.join(sorted(reached))}); a data product is built over "
                    "one database") if reached else "reads no agent-visible table (meta.dptool.table)"
            raise DptoolError(f"{_where(members[0][1])}: data product {dp_id!r} {what}")
        result.document.data_products.append(dpjson.DataProduct(
            dp_id, reached.pop(), request, tables.result(), tuple(_question(q, dialect) for q in questions),
            tuple(uid for uid, _, _ in members)))
    return result


class _Tables:
    """A data product's columns gathered by database table, in DP-Bench's shape."""

    def __init__(self, names: dict[str, str], dialect: str):
        self.names = names
        self.dialect = dialect
        self.tables: dict[str, tuple[list[str], list[dpjson.DerivedColumn]]] = {}
        self.labels: set[str] = set()

    def _name(self, relation: str) -> str:
        return self.names.get(relation, relation.rpartition(".")[2])

    def add(self, node: dict, name: str, col: ColumnLineage) -> None:
        if not col.derived:
            # A column of a table, copied: listed under that table by its own name, with the keys that put it
            # on the model's rows (a DP-Bench data product is tables; joining them again needs the keys, as
            # DP-Bench's search adds the keys of foreign keys between chosen tables).
            for relation, column in (col.edges[0].relation, col.edges[0].column), *col.join_keys:
                columns = self.tables.setdefault(self._name(relation), ([], []))[0]
                if column not in columns:
                    columns.append(column)
            return
        # Two models of one data product may both derive a column of one name: the second is qualified.
        label = name if name not in self.labels else f"{node['name']}__{name}"
        self.labels.add(label)
        # DP-Bench files a derived column under the table it is best situated in: here, its first source's.
        home = col.edges[0].relation if col.edges and col.edges[0].relation else col.reads[0][0] if col.reads else ""
        reads = tuple(sorted((self._name(rel), column) for rel, column in col.reads))
        text = human_description(node.get("columns", {}).get(name, {}).get("description") or "")
        sql = rename_tables(col.provenance, self.names).sql(self.dialect, pretty=True)
        derived = self.tables.setdefault(self._name(home) or node["name"], ([], []))[1]
        derived.append(dpjson.DerivedColumn(label, sql, reads, text))

    def result(self) -> tuple[dpjson.DPTable, ...]:
        return tuple(dpjson.DPTable(name, tuple(cols), tuple(derived))
                     for name, (cols, derived) in sorted(self.tables.items()))


def _where(node: dict) -> str:
    path = node.get("patch_path") or node.get("original_file_path") or "?"
    return f"{path.split('://')[-1]}: {node.get('unique_id', '?')}"


def _properties_path(node: dict) -> str:
    return (node.get("patch_path") or "").split("://")[-1]


def _request(dp_id: str, members: list[tuple[str, dict, dict]]) -> tuple[str, list[dict]]:
    holders = [(node, decl) for _, node, decl in members if decl.get("request")]
    if len(holders) != 1:
        where = _where(members[0][1])
        if not holders:
            raise DptoolError(f"{where}: data product {dp_id!r} has no meta.dptool.data_product.request "
                              "(the data product request, 2-4 sentences)")
        named = " and ".join(_where(node) for node, _ in holders)
        raise DptoolError(f"data product {dp_id!r} declares its request on {len(holders)} models ({named}); "
                          "declare it on one (a `dptool dp create --name` that reuses a hand-made data product's id "
                          "adds a second)")
    node, decl = holders[0]
    if not isinstance(decl["request"], str):
        raise DptoolError(f"{_where(node)}: meta.dptool.data_product.request must be text")
    questions = decl.get("questions") or []
    if not isinstance(questions, list):
        raise DptoolError(f"{_where(node)}: meta.dptool.data_product.questions must be a list")
    for i, q in enumerate(questions):
        for key in ("question", "sql"):
            if not isinstance(q, dict) or not isinstance(q.get(key), str) or not q[key].strip():
                raise DptoolError(f"{_where(node)}: meta.dptool.data_product.questions[{i}].{key} is missing")
    return " ".join(decl["request"].split()), questions


def _question(raw: dict, dialect: str) -> dpjson.Question:
    def sql(text: str) -> str:
        text = " ".join(text.split())
        if not text or dialect == QUESTION_DIALECT:
            return text
        return sqlglot.transpile(text, read=QUESTION_DIALECT, write=dialect)[0]

    return dpjson.Question(" ".join(raw["question"].split()), sql(raw["sql"]), sql(raw.get("dp_sql") or ""))


def _lineage_of(uid: str, node: dict, nodes: dict, schema: dict, dialect: str, catalog: Catalog,
                manifest_path: str, unique: UniqueColumns, spelling: dict) -> dict[str, ColumnLineage]:
    sql = node.get("compiled_code")
    if not sql:
        raise DptoolError(f"{manifest_path}: {uid} has no compiled SQL (the last dbt command did not compile it); "
                          "run `dbt docs generate`, or drop --no-docs-generate")
    # Upstream models that are no agent-visible table are expanded, so lineage reaches the tables.
    sources: dict[str, str] = {}
    todo = list(node.get("depends_on", {}).get("nodes", []))
    while todo:
        parent = nodes.get(todo.pop())
        if (not parent or parent.get("resource_type") != "model" or parent["unique_id"] in catalog.tables
                or not parent.get("relation_name") or parent["relation_name"] in sources):
            continue
        if parent.get("compiled_code"):
            sources[parent["relation_name"]] = parent["compiled_code"]
            todo.extend(parent.get("depends_on", {}).get("nodes", []))
    try:
        tree = qualify_query(sql, schema, dialect, sources)
        columns = model_lineage(tree, schema, dialect, unique)
    except DptoolError as exc:
        raise DptoolError(f"{_where(node)}: {exc}") from None
    return {name: _spelled(col, spelling) for name, col in columns.items()}


def _spelling(schema: dict) -> dict[str, dict[str, str]]:
    """relation key -> lower-cased column -> the column as catalog.json spells it."""
    return {".".join(p.lower() for p in (database, schema_name, name) if p): {c.lower(): c for c in columns}
            for database, schemas in schema.items() for schema_name, relations in schemas.items()
            for name, columns in relations.items()}


def _spelled(col: ColumnLineage, spelling: dict[str, dict[str, str]]) -> ColumnLineage:
    """The lineage with table columns spelled as catalog.json does (sqlglot lower-cases unquoted names)."""

    def spell(relation: str, column: str) -> str:
        return spelling.get(relation, {}).get(column.lower(), column)

    return replace(col, edges=tuple(Edge(e.relation, spell(e.relation, e.column), e.type) for e in col.edges),
                   reads=tuple((r, spell(r, c)) for r, c in col.reads),
                   join_keys=tuple((r, spell(r, c)) for r, c in col.join_keys))
