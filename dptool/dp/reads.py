"""What a SQL text over a DP-Bench database reads: the columns it uses, and whether it only copies one.

The scorer reads a data product's SQL, never its claims: a derived column's source columns are the
columns its provenance SQL reads once qualified against the database's schema, and a "derived" column
whose SQL only copies or renames one column of a table is that table's non-derived column (DP-Bench's
definition, the one dptool.dp.lineage applies to dbt models).
"""

from __future__ import annotations

import contextlib

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.pushdown_projections import pushdown_projections
from sqlglot.optimizer.qualify import qualify

from dptool.dp.dpjson import ColumnRef, Database
from dptool.dp.lineage import join_keys, model_lineage, parse, source_columns
from dptool.errors import DptoolError


def qualified(sql: str, db: Database, dialect: str, *, strict: bool = True) -> exp.Query:
    """The query parsed and qualified against the database's schema.

    Raises DptoolError (one line) when it does not parse and, with `strict`, when it names a table or a
    column the database does not have: such SQL cannot run on the database.
    """
    tree = parse(sql, dialect)
    if strict:
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        for table in tree.find_all(exp.Table):
            if table.name.lower() not in ctes and db.table(table.name) is None:
                raise DptoolError(f"unknown table {table.name}")
    try:
        return qualify(tree, dialect=dialect, schema=db.schema(), validate_qualify_columns=strict,
                       allow_partial_qualification=not strict, identify=False, quote_identifiers=False)
    except SqlglotError as exc:
        raise DptoolError(" ".join(str(exc).split())[:120]) from None


def columns_read(tree: exp.Query) -> set[ColumnRef]:
    """The (table, column)s of the database a qualified query reads, in any clause of any scope.

    Projections of CTEs and subqueries that nothing reads are pruned first: a column a query only carries
    along is not one it uses.
    """
    with contextlib.suppress(SqlglotError):  # pruning needs resolved stars; without it every column counts
        tree = pushdown_projections(tree.copy())
    return {(table, column.lower()) for table, column in source_columns(tree)}


def tables_read(tree: exp.Query, db: Database) -> set[str]:
    """The tables of the database a query reads (CTEs and subqueries aside)."""
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    return {t.name.lower() for t in tree.find_all(exp.Table) if t.name.lower() not in ctes and db.table(t.name)}


def question_columns(sql: str, db: Database, dialect: str) -> set[ColumnRef]:
    """The (table, column)s of the database that a question's gold SQL reads."""
    return columns_read(qualified(sql, db, dialect, strict=False))


def copied_column(tree: exp.Query, db: Database, dialect: str) -> tuple[ColumnRef, set[ColumnRef]] | None:
    """The one column of a table that a one-column qualified query copies or renames, with the keys its joins
    read, or None when it computes something.

    DP-Bench: a copy is a non-derived column of that table, a join on the way or not; the keys that join it
    are non-derived columns too, as in the gold data products dptool.dp.products exports.
    """
    if not isinstance(tree, exp.Select) or len(tree.selects) != 1:
        return None
    if not isinstance(tree.selects[0].unalias(), exp.Column):
        return None  # computed right here: no need to follow it down
    try:
        [column] = model_lineage(tree, db.schema(), dialect).values()
    except (DptoolError, SqlglotError, ValueError):
        return None
    if column.derived:
        return None
    return (column.edges[0].relation, column.edges[0].column.lower()), {(t, c.lower()) for t, c in join_keys(tree)}
