"""Column lineage of one query with sqlglot: typed edges, and each column's provenance query.

A model's compiled SQL is qualified once against the warehouse schema (from dbt's catalog.json); every
output column is then traced down to the columns of the relations it reads. Each edge is typed by the
strongest transformation on its path, weakest first: pass-through, rename, cast, derived, aggregate.
A source that sqlglot cannot tie to a column of a known relation is kept as an `unresolved` edge.

DP-Bench's definitions: a column copied or renamed from one column of any table (through a join or not)
is a non-derived column of that table; every other column is derived (computed, cast included), and its
provenance is the query cut down to it, with every join that can change its rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.lineage import Node, lineage
from sqlglot.optimizer.pushdown_projections import pushdown_projections
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, build_scope, traverse_scope
from sqlglot.schema import MappingSchema, ensure_schema

from dptool.errors import DptoolError

EDGE_TYPES = ("pass-through", "rename", "cast", "derived", "aggregate")
UNRESOLVED = "unresolved"
_RANK = {name: rank for rank, name in enumerate(EDGE_TYPES)}
# Wrappers that leave a value as it is: a column under only these is passed through (or renamed).
_TRANSPARENT = (exp.Alias, exp.Paren)
_CASTS = (exp.Cast, exp.TryCast)

Source = tuple[str, str]  # (relation key, column), e.g. ("dptool_demo.ecommerce.orders", "order_id")
# Columns that hold no value twice, by relation key (dbt `unique` tests): a LEFT JOIN on one keeps the rows.
UniqueColumns = frozenset[Source]
_COPIES = ("pass-through", "rename")


@dataclass(frozen=True)
class Edge:
    """One source column of an output column, and how the value changed on the way."""

    relation: str  # relation key; "" when unresolved
    column: str
    type: str  # one of EDGE_TYPES or UNRESOLVED


@dataclass(frozen=True)
class ColumnLineage:
    """Where one output column comes from.

    `kind` is the strongest transformation anywhere on the column's paths (a `count(*)` has no source
    column but is still an aggregate). `through_join` says some source is reached through a JOIN rather
    than the query's FROM. `provenance` is the query cut down to this column; `reads` every table column
    that query reads, in any clause of any scope (expression, join keys, filters, grouping); `join_keys`
    the table columns its join conditions read (what places a copied column on the model's rows).
    """

    name: str
    kind: str
    expression: str
    edges: tuple[Edge, ...]
    through_join: bool
    provenance: exp.Query
    reads: tuple[Source, ...]
    join_keys: tuple[Source, ...] = ()

    @property
    def derived(self) -> bool:
        """Computed: not one column of a table copied or renamed (DP-Bench's non-derived column)."""
        return self.kind not in _COPIES or len(self.edges) != 1 or self.edges[0].type not in _COPIES


def relation_key(table: exp.Table) -> str:
    """`catalog.db.name` of a table reference, lower-cased, without its empty parts."""
    return ".".join(p.lower() for p in (table.catalog, table.db, table.name) if p)


def parse(sql: str, dialect: str) -> exp.Query:
    """One query, parsed; a DptoolError in one line when it is not SQL sqlglot reads."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError as exc:
        first = " ".join(str(exc).split())
        raise DptoolError(f"cannot parse SQL ({first[:160]})") from None
    if not isinstance(tree, exp.Query):
        raise DptoolError(f"not a query: {tree.sql(dialect)[:80]!r}")
    return tree


def qualify_query(sql: str | exp.Query, schema: dict | MappingSchema, dialect: str,
                  sources: dict[str, str] | None = None, validate: bool = False) -> exp.Query:
    """The query with every table and column qualified against `schema` (done once per query).

    `sources` maps relation names to the SQL that builds them (upstream models that are not tables of
    the schema); they are expanded in place, so lineage continues through them. With `validate`, a
    column no relation has raises a DptoolError.
    """
    tree = parse(sql, dialect) if isinstance(sql, str) else sql.copy()
    if sources:
        parsed = {relation_key(sqlglot.to_table(name, dialect=dialect)): parse(body, dialect)
                  for name, body in sources.items()}
        for table in tree.find_all(exp.Table):
            if relation_key(table) in parsed and not table.alias:
                table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name)))  # not the quoted full name
        tree = exp.expand(tree, parsed, dialect=dialect)
    for node in tree.walk():
        node.comments = None  # dbt's header comments would otherwise travel into every provenance query
    try:
        # Leniently, a column catalog.json lacks stays in the query: lineage names it unresolved.
        return qualify(tree, dialect=dialect, schema=ensure_schema(schema, dialect=dialect),
                       validate_qualify_columns=validate, allow_partial_qualification=not validate, identify=False,
                       quote_identifiers=False)
    except SqlglotError as exc:
        raise DptoolError(" ".join(str(exc).split())[:200]) from None


def rename_tables(query: exp.Query, names: dict[str, str]) -> exp.Query:
    """The query with base relations named as `names` says (relation key -> bare name); aliases kept."""
    query = query.copy()
    for table in list(query.find_all(exp.Table)):
        key = relation_key(table)
        if key in names:
            renamed = exp.table_(names[key])
            if table.args.get("alias"):
                renamed.set("alias", table.args["alias"])
            table.replace(renamed)
    return query


def source_columns(tree: exp.Query) -> set[Source]:
    """Every column of a base relation that a qualified query reads, in any clause of any scope."""
    found: set[Source] = set()
    for scope in traverse_scope(tree):
        for column in scope.columns:
            source = scope.sources.get(column.table)
            if isinstance(source, exp.Table):
                found.add((relation_key(source), column.name))
    return found


def join_keys(tree: exp.Query) -> set[Source]:
    """Every column of a base relation that the join conditions of a qualified query read."""
    found: set[Source] = set()
    for scope in traverse_scope(tree):
        if not isinstance(scope.expression, exp.Select):
            continue
        for join in scope.expression.args.get("joins") or []:
            for column in join.find_all(exp.Column):
                source = scope.sources.get(column.table)
                if isinstance(source, exp.Table):
                    found.add((relation_key(source), column.name))
    return found


def model_lineage(tree: exp.Query, schema: dict | MappingSchema, dialect: str,
                  unique: UniqueColumns = frozenset()) -> dict[str, ColumnLineage]:
    """The lineage of every output column of a qualified query (see `qualify_query`), by column name.

    `unique` names the table columns known to hold each value once: a LEFT JOIN on one cannot change the
    rows, so a column's provenance may leave it out.
    """
    schema = ensure_schema(schema, dialect=dialect)
    scope = build_scope(tree)
    if scope is None:
        raise DptoolError("cannot build lineage: not a SELECT")
    try:
        nodes = lineage(None, tree, schema, dialect=dialect, scope=scope)
    except SqlglotError as exc:
        raise DptoolError(f"cannot build lineage: {' '.join(str(exc).split())[:160]}") from None
    result = {}
    for name, node in nodes.items():
        walk = _Walk(schema)
        walk.visit(node, name, "pass-through")
        query = provenance_query(tree, name, unique)
        expression = _unalias(node.expression).sql(dialect)
        edges = tuple(sorted((Edge(rel, col, kind) for (rel, col), kind in walk.edges.items()),
                             key=lambda e: (e.relation, e.column)))
        result[name] = ColumnLineage(name, walk.kind, expression, edges, walk.through_join, query,
                                     tuple(sorted(source_columns(query))), tuple(sorted(join_keys(query))))
    return result


class _Walk:
    """Follows one output column's lineage nodes, typing each path from the column to a source."""

    def __init__(self, schema: MappingSchema):
        self.schema = schema
        self.edges: dict[Source, str] = {}
        self.kind = "pass-through"
        self.through_join = False

    def visit(self, node: Node, out_name: str, path_type: str) -> None:
        self.kind = _max(self.kind, _expression_type(node.expression, out_name))
        joins = _join_aliases(node.source)
        for down in node.downstream:
            alias, _, column = down.name.rpartition(".")
            step = _step_type(node.expression, alias, column, out_name)
            self.through_join = self.through_join or alias in joins
            kind = _max(path_type, step)
            if isinstance(down.expression, exp.Table):
                self._leaf(down.expression, column, kind)
            elif not down.downstream and isinstance(_unalias(down.expression), exp.Column):
                # sqlglot could not say which relation this column comes from
                self.edges[(alias, column)] = UNRESOLVED
            else:
                self.visit(down, column, kind)

    def _leaf(self, table: exp.Table, column: str, kind: str) -> None:
        key = relation_key(table)
        known = self.schema.find(exp.table_(table.name, db=table.db or None, catalog=table.catalog or None),
                                 ensure_data_types=False)
        if known is None or column not in known:
            self.edges[(key, column)] = UNRESOLVED
            return
        previous = self.edges.get((key, column))
        self.edges[(key, column)] = kind if previous is None else _max(previous, kind)


def _max(a: str, b: str) -> str:
    if UNRESOLVED in (a, b):
        return UNRESOLVED
    return a if _RANK[a] >= _RANK[b] else b


def _unalias(expression: exp.Expression) -> exp.Expression:
    return expression.this if isinstance(expression, exp.Alias) else expression


def _join_aliases(source: exp.Expression) -> set[str]:
    if not isinstance(source, exp.Select):
        return set()
    return {join.this.alias_or_name for join in source.args.get("joins") or []}


def _expression_type(expression: exp.Expression, out_name: str) -> str:
    """How a select expression transforms its inputs, as a whole."""
    inner = _unalias(expression)
    if inner.find(exp.AggFunc) or inner.find(exp.Window):
        return "aggregate"
    while isinstance(inner, exp.Paren):
        inner = inner.this
    if isinstance(inner, exp.Column):
        return "pass-through" if inner.name == out_name else "rename"
    if isinstance(inner, _CASTS) and isinstance(_unalias(inner.this), exp.Column):
        return "cast"
    if isinstance(inner, exp.Star):
        return "pass-through"
    return "derived"


def _step_type(expression: exp.Expression, alias: str, column: str, out_name: str) -> str:
    """How the select expression transforms its input `alias.column` (the strongest occurrence)."""
    found = [c for c in expression.find_all(exp.Column) if c.name == column and (c.table or "") == alias]
    if not found:
        return _expression_type(expression, out_name)
    best = "pass-through"
    for occurrence in found:
        kind = "pass-through" if column == out_name else "rename"
        parent = occurrence.parent
        while parent is not None and parent is not expression.parent:
            if isinstance(parent, exp.AggFunc | exp.Window):
                kind = "aggregate"
                break
            if isinstance(parent, _CASTS):
                kind = _max(kind, "cast")
            elif not isinstance(parent, _TRANSPARENT):
                kind = "derived"
            parent = parent.parent
        best = _max(best, kind)
    return best


def provenance_query(tree: exp.Query, column: str, unique: UniqueColumns = frozenset()) -> exp.Query:
    """The qualified query cut down to one output column.

    Keeps what computes the column: its expression, the filters, the grouping, the joins and CTE columns
    those reach, and every join that can change the rows (see `_keeps_rows`). Only a LEFT JOIN that matches
    at most one row of its relation, and that nothing kept reads, is left out.
    """
    query = tree.copy()
    if isinstance(query, exp.Select):
        chosen = [s for s in query.selects if s.alias_or_name == column]
        query.set("expressions", chosen[:1])
    previous = None
    while previous != query.sql():
        previous = query.sql()
        query = pushdown_projections(query)
        for scope in traverse_scope(query):
            if isinstance(scope.expression, exp.Select):
                _prune_joins(scope, unique)
    return query


def _prune_joins(scope: Scope, unique: UniqueColumns) -> None:
    select = scope.expression
    joins = select.args.get("joins") or []
    if not joins:
        return
    by_alias = {j.this.alias_or_name: j for j in joins}
    # Columns of this select outside its joins (nested queries have their own scopes).
    needed = {c.table for key, value in select.args.items() if key not in ("joins", "with_", "with")
              for part in (value if isinstance(value, list) else [value]) if isinstance(part, exp.Expression)
              for c in part.find_all(exp.Column)}
    needed |= {alias for alias, join in by_alias.items() if not _keeps_rows(join, scope, unique)}
    grew = True
    while grew:
        grew = False
        for alias, join in by_alias.items():
            if alias in needed:
                refs = {c.table for c in join.find_all(exp.Column)} - needed
                if refs:
                    needed |= refs
                    grew = True
    for alias, join in by_alias.items():
        if alias not in needed:
            join.pop()


def _keeps_rows(join: exp.Join, scope: Scope, unique: UniqueColumns) -> bool:
    """A LEFT (outer) JOIN whose condition matches at most one row of its relation: every row stays, once.

    Anything else can change the rows: an inner or cross join drops or repeats them, a right or full
    join adds some, and a LEFT JOIN on a key that is not unique on its side repeats them.
    """
    if (join.side or "").upper() != "LEFT" or (join.kind or "").upper() not in ("", "OUTER") or join.args.get("using"):
        return False
    alias = join.this.alias_or_name
    keyed = set()  # columns of the joined relation equated with something outside it
    condition = join.args.get("on")
    for part in condition.flatten() if isinstance(condition, exp.And) else [condition] if condition else []:
        if not isinstance(part, exp.EQ):
            continue
        for mine, other in ((part.this, part.expression), (part.expression, part.this)):
            if (isinstance(mine, exp.Column) and mine.table == alias
                    and all(c.table != alias for c in other.find_all(exp.Column))):
                keyed.add(mine.name)
    source = scope.sources.get(alias)
    if isinstance(source, exp.Table):
        return any((relation_key(source), name) in unique for name in keyed)
    if isinstance(source, Scope):
        return any(key <= keyed for key in _unique_keys(source.expression, source, unique))
    return False


def _unique_keys(query: exp.Expression, scope: Scope, unique: UniqueColumns) -> list[set[str]]:
    """Sets of output columns of a derived relation that identify its rows (each set is a unique key)."""
    if not isinstance(query, exp.Select):
        return []
    outputs = {_unalias(s).sql(): s.alias_or_name for s in query.selects}
    if query.args.get("distinct"):
        return [{s.alias_or_name for s in query.selects}]
    group = query.args.get("group")
    if group:
        names = [outputs.get(e.sql()) for e in group.expressions]
        return [set(names)] if all(names) else []
    if query.args.get("joins") or not isinstance(query.args.get("from_"), exp.From):
        return []
    keys = []
    for projection in query.selects:
        inner = _unalias(projection)
        source = scope.sources.get(inner.table) if isinstance(inner, exp.Column) else None
        if isinstance(source, exp.Table) and (relation_key(source), inner.name) in unique:
            keys.append({projection.alias_or_name})
    return keys
