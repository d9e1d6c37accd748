"""SQL over sqlglot: literals from data, task SQL cut from a gold model, relations renamed."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

import sqlglot
from sqlglot import exp

from dptool.errors import DptoolError

SQL_DIALECTS = {"duckdb": "duckdb", "postgres": "postgres", "spark": "spark", "databricks": "databricks",
                "snowflake": "snowflake", "bigquery": "bigquery", "redshift": "redshift", "trino": "trino"}


def dialect_of(adapter_type: str) -> str:
    """The sqlglot dialect for a dbt adapter type."""
    return SQL_DIALECTS.get(adapter_type, adapter_type)


@dataclass(frozen=True)
class SharedQuery:
    """A query whose leading CTEs other queries may read too: its text is `assemble(ctes)`.

    `ctes` holds the (name, body) of those CTEs in order (a body may read earlier ones by name); `assemble`
    writes the query around any bodies given for them. `Warehouse.query_shared` computes a CTE that several
    queries read once and hands each query a body that reads the result.
    """

    ctes: tuple[tuple[str, str], ...]
    assemble: Callable[[tuple[tuple[str, str], ...]], str]

    @property
    def sql(self) -> str:
        return self.assemble(self.ctes)

    @classmethod
    def plain(cls, sql: str) -> SharedQuery:
        """A query that shares nothing."""
        return cls((), lambda _: sql)


def literal(value) -> exp.Expression:
    """A SQL literal for a value drawn from data: never built by string formatting."""
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | float | Decimal):
        return exp.Literal.number(str(value))
    if isinstance(value, datetime | date):
        return exp.cast(exp.Literal.string(value.isoformat(sep=" ") if isinstance(value, datetime)
                                           else value.isoformat()), "timestamp")
    return exp.Literal.string(str(value))


# the words a column name is quoted for: DuckDB's reserved keywords (PostgreSQL's and a few); the dbt package's
# dptool.reserved_words() (macros/reserved_words.sql) is the same list (tests/test_project_breakers.py holds them to
# each other)
RESERVED = frozenset({
    "all", "analyse", "analyze", "and", "anti", "any", "array", "as", "asc", "asof", "asymmetric", "at",
    "authorization", "binary", "both", "by", "case", "cast", "check", "collate", "collation", "column", "columns",
    "concurrently", "constraint", "create", "cross", "current_catalog", "current_date", "current_role",
    "current_time", "current_timestamp", "current_user", "default", "deferrable", "desc", "describe", "distinct",
    "do", "else", "end", "except", "false", "fetch", "for", "foreign", "freeze", "from", "full", "generated",
    "glob", "grant", "group", "having", "ilike", "in", "initially", "inner", "intersect", "into", "is", "isnull",
    "join", "lambda", "lateral", "leading", "left", "like", "limit", "localtime", "localtimestamp", "map",
    "natural", "not", "notnull", "null", "offset", "on", "only", "or", "order", "outer", "overlaps", "pivot",
    "pivot_longer", "pivot_wider", "placing", "positional", "primary", "qualify", "references", "returning",
    "right", "select", "semi", "session_user", "show", "similar", "some", "struct", "summarize", "symmetric",
    "table", "tablesample", "then", "to", "trailing", "true", "try_cast", "tuple", "union", "unique", "unpack",
    "unpivot", "user", "using", "variadic", "verbose", "when", "where", "window", "with"
})
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def column(name: str, quote: bool = False) -> exp.Column:
    """A column of the project's, quoted where SQL needs it: a name that is not letters, digits and underscores, a
    reserved word, or a column declared `quote: true`; as it is otherwise (the warehouse's case rules apply). The
    dbt package's dptool.quote_column decides the same way."""
    needed = quote or not _PLAIN.fullmatch(name) or name.lower() in RESERVED
    return exp.column(exp.to_identifier(name, quoted=needed))


def equals(column_name: str, value, dialect: str, quote: bool = False) -> str:
    """`column = <literal>` in the dialect."""
    return exp.EQ(this=column(column_name, quote), expression=literal(value)).sql(dialect)


def in_window(column_name: str, start: date, end: date, dialect: str, quote: bool = False) -> list[str]:
    """`start <= column < end`, as two predicates over timestamp literals."""
    return list(_in_window(column_name, start, end, dialect, quote))


@functools.lru_cache(maxsize=4096)
def _in_window(column_name: str, start: date, end: date, dialect: str, quote: bool) -> tuple[str, str]:
    # instantiation asks for the same few windows of the same columns thousands of times
    lo = exp.GTE(this=column(column_name, quote), expression=literal(datetime(start.year, start.month, start.day)))
    hi = exp.LT(this=column(column_name, quote), expression=literal(datetime(end.year, end.month, end.day)))
    return lo.sql(dialect), hi.sql(dialect)


def variant_query(compiled_sql: str, cte: str, order_by: list[str], dialect: str) -> exp.Query:
    """The query of one variant (a CTE such as dptool_gold) of a compiled gold model, standalone.

    Keeps only the CTEs the variant reads, in their compiled order, and selects from the variant.
    """
    return variant_queries(compiled_sql, [cte], order_by, dialect)[cte]


def variant_queries(compiled_sql: str, names: list[str], order_by: list[str], dialect: str) -> dict[str, exp.Query]:
    """`variant_query` of several variants, from one parse of the compiled SQL."""
    tree = _parse(compiled_sql, dialect)
    with_ = tree.args.get("with_") or tree.args.get("with")  # the key was renamed in sqlglot 27
    ctes = {c.alias: c for c in (with_.expressions if with_ else [])}
    # dbt keeps an ephemeral model's leading comment in some runs and not in others: comments go
    for node in tree.walk():
        node.comments = None
    return {name: _standalone(name, ctes, order_by) for name in names}


def _parse(compiled_sql: str, dialect: str) -> exp.Expression:
    try:
        tree = sqlglot.parse_one(compiled_sql, read=dialect)
    except sqlglot.errors.ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        where = f" (line {first.get('line')}, column {first.get('col')})" if first else ""
        reason = first.get("description") or str(exc).splitlines()[0]
        raise DptoolError(f"cannot parse compiled SQL: {reason}{where}") from None
    return tree


def _standalone(cte: str, ctes: dict[str, exp.CTE], order_by: list[str]) -> exp.Query:
    needed = _reads(cte, ctes)
    query = exp.select("*").from_(cte)
    for c in ctes.values():
        if c.alias in needed:  # copy=False: the query is ours, and copying it per CTE is quadratic
            query = query.with_(c.alias, as_=_drop_repeated_ctes(c.this.copy(), ctes), copy=False)
    if order_by:
        query = query.order_by(*[column(col) for col in order_by], copy=False)
    return query


def _drop_repeated_ctes(body: exp.Expression, top: dict[str, exp.CTE]) -> exp.Expression:
    """Drop nested copies of top-level CTEs.

    dbt injects an ephemeral model's CTEs into a nested WITH of another ephemeral model in some runs and
    not in others (it depends on thread order); dropping the copies gives one text for both.
    """
    for with_ in list(body.find_all(exp.With)):
        for inner in list(with_.expressions):
            if inner.alias in top and inner.this == top[inner.alias].this:
                inner.pop()
        if not with_.expressions:
            with_.pop()
    return body


class VariantWriter:
    """`pretty(rename_relations(variant_query(...)))` of many gold models, as text, sooner.

    The gold models of one metric share the CTEs dbt injects (the ephemeral models they read): each is
    parsed, renamed and written once, and only a model's own SQL (its variants) is parsed per model.
    """

    def __init__(self, dialect: str, mapping: dict[tuple[str, str, str], tuple[str, str]], out_dialect: str):
        self.dialect, self.mapping, self.out_dialect = dialect, mapping, out_dialect
        self._parsed: dict[tuple[str, str], exp.CTE] = {}
        self._texts: dict[tuple[str, str], str] = {}

    def queries(self, injected: list[tuple[str, str]], own_sql: str, names: list[str],
                order_by: list[str]) -> dict[str, SharedQuery]:
        """The SQL of each variant in `names`, from a compiled model given as the (name, SQL) of each CTE
        dbt injected, in order, and the model's own SQL (see dptool.project.batch.Compiled); as a SharedQuery
        whose shared CTEs are the injected ones it reads (its `sql` is the text)."""
        tree = _parse(own_sql, self.dialect)
        for node in tree.walk():
            node.comments = None
        with_ = tree.args.get("with_") or tree.args.get("with")
        own = {c.alias: c for c in (with_.expressions if with_ else [])}
        ctes = {**{name: self._cte(name, sql) for name, sql in injected}, **own}
        texts = {}
        for name, sql in injected:
            if (name, sql) not in self._texts:  # the same SQL reads the same injected CTEs: same text
                self._texts[name, sql] = self._text(name, _drop_repeated_ctes(ctes[name].this.copy(), ctes))
            texts[name] = self._texts[name, sql]
        shared_names = {name for name, _ in injected}
        out = {}
        for name in names:
            needed = _reads(name, ctes)
            for cte in needed - texts.keys():  # the model's own CTEs: its own parse, changed in place
                texts[cte] = self._text(cte, _drop_repeated_ctes(ctes[cte].this, ctes))
            tail = exp.select("*").from_(name)
            if order_by:
                tail = tail.order_by(*[column(col) for col in order_by], copy=False)
            in_order = [c for c in ctes if c in needed]
            shared = []
            for c in in_order:  # the injected CTEs lead, in dbt's order: each one's body, if its text is in form
                body = _cte_body(c, texts[c]) if c in shared_names else None
                if body is None:
                    break
                shared.append((c, body))
            rest = [texts[c] for c in in_order[len(shared):]]
            out[name] = SharedQuery(tuple(shared), _with_writer(rest, tail.sql(dialect=self.out_dialect, pretty=True)))
        return out

    def _cte(self, name: str, sql: str) -> exp.CTE:
        if (name, sql) not in self._parsed:
            body = _parse(sql, self.dialect)
            for node in body.walk():
                node.comments = None
            self._parsed[name, sql] = exp.CTE(this=body, alias=exp.TableAlias(this=exp.to_identifier(name)))
        return self._parsed[name, sql]

    def _text(self, name: str, body: exp.Expression) -> str:
        body = rename_relations(body, self.mapping, copy=False)
        # copy=False: `body` is a copy, or a model's own parse, no one reads after (the copy sqlglot makes
        # otherwise was a fifth of generate's Python time)
        return exp.CTE(this=body, alias=exp.TableAlias(this=exp.to_identifier(name))).sql(
            dialect=self.out_dialect, pretty=True, copy=False)


def _cte_body(name: str, text: str) -> str | None:
    """The body of a CTE as sqlglot writes it pretty (`<name> AS (\n<body>\n)`), or None in another form."""
    head = f"{name} AS (\n"
    return text[len(head):-2] if text.startswith(head) and text.endswith("\n)") else None


def _with_writer(rest: list[str], tail: str) -> Callable[[tuple[tuple[str, str], ...]], str]:
    """How VariantWriter assembles a variant: its shared CTEs (given), then the other CTEs and the select."""
    def assemble(shared: tuple[tuple[str, str], ...]) -> str:
        return "WITH " + ", ".join([*(f"{n} AS (\n{body}\n)" for n, body in shared), *rest]) + "\n" + tail
    return assemble


def _reads(cte: str, ctes: dict[str, exp.CTE]) -> set[str]:
    """The CTEs a CTE reads, itself and those they read."""
    if cte not in ctes:
        raise DptoolError(f"compiled SQL has no CTE named {cte!r}")
    needed: set[str] = set()
    todo = [cte]
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        for table in ctes[name].this.find_all(exp.Table):
            if not table.db and table.name in ctes:
                todo.append(table.name)
    return needed


def rename_relations(query: exp.Expression, mapping: dict[tuple[str, str, str], tuple[str, str]],
                     copy: bool = True) -> exp.Expression:
    """Point relations at new names: (database, schema, name) -> (schema, name), lower-cased keys."""
    query = query.copy() if copy else query
    for table in list(query.find_all(exp.Table)):
        key = (table.catalog.lower(), table.db.lower(), table.name.lower())
        if key in mapping:
            schema, name = mapping[key]
            new = exp.table_(name, db=schema, quoted=True)
            if table.alias:
                new.set("alias", table.args["alias"])
            table.replace(new)
    return query


def relation_key(relation_name: str, dialect: str) -> tuple[str, str, str]:
    """(database, schema, name) of a dbt relation_name, lower-cased."""
    t = sqlglot.to_table(relation_name, dialect=dialect)
    return (t.catalog.lower(), t.db.lower(), t.name.lower())


def pretty(query: exp.Expression, dialect: str) -> str:
    return query.sql(dialect=dialect, pretty=True)


# Engines whose quotient and average of DECIMALs are DECIMALs of bounded scale: Spark keeps max(6, s1 + p2 + 1)
# digits of a quotient and s + 4 of an average, where DuckDB (a bundle's warehouse) computes both as DOUBLEs.
DECIMAL_ARITHMETIC = frozenset({"spark", "databricks", "hive"})


def double_arithmetic(sql: str, dialect: str) -> str:
    """`sql` computing each quotient and average in DOUBLEs, as DuckDB does: `a / b` -> `cast(a as double) / b`,
    `avg(x)` -> `avg(cast(x as double))`. The same SQL where the dialect does so already (not in
    DECIMAL_ARITHMETIC), or where it does not parse.

    A gold read this way is what the bundle's `gold_sql` gives on DuckDB, to 1e-9: on Spark, `1.0 * sum(discount)
    / sum(subtotal)` would keep 6 digits (0.055457 for 0.0554570534) and `avg(case ... then 1.0 else 0.0 end)` 5
    (0.00725 for 0.0072492952). Sums, products and rounding are left alone: exact on both.
    """
    if dialect not in DECIMAL_ARITHMETIC:
        return sql
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.ParseError:
        return sql
    changed = False
    for node in list(tree.find_all(exp.Div, exp.Avg)):
        operand = node.this
        if isinstance(operand, exp.Cast) and operand.to.this in (exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT):
            continue
        node.set("this", exp.cast(operand, exp.DataType.Type.DOUBLE))
        changed = True
    return tree.sql(dialect=dialect) if changed else sql
