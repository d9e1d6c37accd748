"""The data of a target that is not a DuckDB file, read through its dbt adapter (dptool.project.dbt.AdapterSession).

`AdapterWarehouse` answers the same `query` as the DuckDB `Warehouse` (profiling dimensions, reading probes and
gold rows), with numbers as DuckDB computes them; `export_from_adapter` copies the agent-visible tables into the
bundle's DuckDB file.
"""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path

import duckdb
import sqlglot
from sqlglot import exp

from dptool.errors import DptoolError
from dptool.project.dbt import AdapterSession, Connection, DbtProject
from dptool.sql import SharedQuery, dialect_of, double_arithmetic

BATCH_ROWS = 2000  # rows per INSERT when copying a table into DuckDB
PACK = 8  # Spark queries of one query_shared call per statement (AdapterWarehouse._packed)


class AdapterWarehouse:
    """The project's target, queried through dbt's adapter; numbers come back as Python floats and ints."""

    def __init__(self, project: DbtProject):
        self.session = AdapterSession(project)
        self.dialect = dialect_of(self.session.adapter_type)
        self.path = self.session.where  # what an error message names

    @classmethod
    def of(cls, connection: Connection) -> AdapterWarehouse:
        if connection.project is None:
            raise DptoolError(f"target type {connection.adapter_type!r}: no dbt project to reach it through")
        return cls(connection.project)

    def query(self, sql: str) -> tuple[list[str], list[tuple]]:
        """Run one query; return its column names and rows, numbers as DuckDB computes them: each quotient and
        average in DOUBLEs where the target keeps a DECIMAL of bounded scale (dptool.sql.double_arithmetic), and
        decimals read as floats. So a gold read here is what its `gold_sql` gives on the bundle's DuckDB file."""
        names, _, rows = self.typed_query(double_arithmetic(sql, self.dialect))
        return names, rows

    def typed_query(self, sql: str) -> tuple[list[str], list[str], list[tuple]]:
        """Run one query as it is written (the target's own arithmetic); return its column names, each column's
        type as the adapter names it (the precision a number was computed at, which its float no longer tells:
        Spark's avg of a DECIMAL(p, s) is a DECIMAL(p + 4, s + 4), where DuckDB's is a DOUBLE) and its rows."""
        names, types, rows = self.session.query(sql)
        return names, types, [tuple(_plain(v) for v in row) for row in rows]

    def query_each(self, queries: Iterable[str]) -> Iterator[tuple[list[str], list[tuple]] | DptoolError]:
        """Run many queries (`query` each), as many at a time as the profile's `threads` (what dbt sends the target
        at once), each thread on its own connection; yield each one's columns and rows, or its error, in the order
        given.

        A warehouse's cost per query is mostly waiting (planning, scheduling, the network), not this process: on
        Spark, one query plans while another runs.
        """
        return self._pooled(queries, self._query_or_error)

    def _threads(self) -> int:
        """The profile's `threads`: how many statements dbt sends the target at once."""
        return max(1, int(getattr(self.session.adapter.config, "threads", 1) or 1))

    def _query_or_error(self, sql: str):
        try:
            return self.query(sql)
        except DptoolError as exc:
            return exc

    def _pooled(self, items: Iterable, run) -> Iterator:
        """`run(item)` of each item, `threads` at a time, each thread on its own connection; results in order."""
        threads = self._threads()
        if threads == 1:
            for item in items:
                yield run(item)
            return
        manager = self.session.adapter.connections
        local = threading.local()

        def work(item):
            if not getattr(local, "named", False):  # this thread's connection, opened on its first query
                manager.set_connection_name(f"dptool_{threading.get_ident()}")
                local.named = True
            return run(item)

        pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="dptool-sql")
        try:
            yield from pool.map(work, items)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)  # the threads' connections close with the session

    def query_shared(self, queries: Iterable[SharedQuery]) -> Iterator[tuple[list[str], list[tuple]] | DptoolError]:
        """`query_each` of the queries' texts, each run whole: a table per shared CTE would be written to the
        user's warehouse (and on a local SparkSession, a cached temporary view per shared CTE cost more than it
        saved: the README's "Beyond one machine: Apache Spark"). On Spark, PACK queries to a statement (`_packed`)."""
        sqls = [q.sql for q in queries]
        if self.dialect != "spark":
            return self.query_each(sqls)
        threads = self._threads()
        size = max(1, min(PACK, -(-len(sqls) // threads)))  # a statement for every thread, when there are few
        return self._each_pack([sqls[i:i + size] for i in range(0, len(sqls), size)])

    def _each_pack(self, packs: list[list[str]]) -> Iterator[tuple[list[str], list[tuple]] | DptoolError]:
        results = self._pooled(packs, self._packed)
        try:
            for pack in results:
                yield from pack
        finally:  # closed with this generator, not by the garbage collector: its threads stop now
            results.close()

    def _packed(self, sqls: list[str]) -> list[tuple[list[str], list[tuple]] | DptoolError]:
        """`query` of each of several Spark queries, in one statement: what Spark spends per statement (planning
        it, scheduling its jobs), not per row, is most of a small query's cost.

        The statement is the UNION ALL of each query's rows, each as a struct in a column of its own (NULL in the
        other parts: the UNION ALL types the column as the struct of its query), after its query's number; so
        each value comes back as the query alone gives it (a DECIMAL as a Decimal, a TIMESTAMP to the
        microsecond, a NULL), in the query's order (a UNION ALL keeps its parts' rows in order). A query with no
        rows names no columns there, and runs again alone; when the statement fails, each query runs alone, and
        the error is that query's own.
        """
        if len(sqls) == 1:
            return [self._query_or_error(sqls[0])]
        parts = []
        for i, sql in enumerate(sqls):
            columns = ", ".join(f"{'struct(*)' if j == i else 'null'} as dptool_q{j}" for j in range(len(sqls)))
            # the query on lines of its own: a comment on its last line would otherwise end the statement
            parts.append(f"select {i} as dptool_q, {columns} from (\n{double_arithmetic(sql, self.dialect)}\n)"
                         f" as dptool_q{i}")
        try:
            _, _, rows = self.session.query("\nunion all\n".join(parts))
        except DptoolError:
            return [self._query_or_error(sql) for sql in sqls]
        found: list[tuple[list[str], list[tuple]] | None] = [None] * len(sqls)
        for row in rows:
            i = row[0]
            struct = row[1 + i]
            if found[i] is None:
                found[i] = (list(struct.__fields__), [])
            found[i][1].append(tuple(_plain(v) for v in struct))
        return [r if r is not None else self._query_or_error(sqls[i]) for i, r in enumerate(found)]

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> AdapterWarehouse:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _plain(value):
    """A value as dptool reads it from DuckDB: decimals as floats, and a timestamp with a time zone as the
    session's wall-clock time (PostgreSQL's date_trunc of a date gives one; DuckDB's gives a plain one)."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.replace(tzinfo=None)
    return value


def export_from_adapter(connection: Connection, tables: list[tuple[str, str, str]], dest: str | Path) -> None:
    """Copy tables from the target into a new DuckDB file: (relation_name in the target, schema, name) each.

    Column types come from the values (numbers with decimals become DOUBLE and timestamps with a time zone
    plain TIMESTAMP, as the gold rows read through the adapter do), or from the adapter's type name for a
    column that holds only NULLs. Rows are written
    in a total order, so that a rerun writes the same file content.
    """
    dest = Path(dest)
    if dest.exists():
        dest.unlink()
    with AdapterWarehouse.of(connection) as wh:
        con = duckdb.connect(str(dest))
        try:
            for relation_name, schema, name in tables:
                source = sqlglot.to_table(relation_name, dialect=wh.dialect)
                names, types, rows = wh.session.query(exp.select("*").from_(source).sql(wh.dialect))
                if not names:
                    raise DptoolError(f"{relation_name}: the table has no columns")
                columns = [_duckdb_type(types[i], [r[i] for r in rows]) for i in range(len(names))]
                _write(con, schema, name, names, columns, [tuple(_plain(v) for v in row) for row in rows])
            con.execute("checkpoint")
        finally:
            con.close()


def _write(con, schema: str, name: str, names: list[str], types: list[str], rows: list[tuple]) -> None:
    quoted_schema = exp.to_identifier(schema, quoted=True).sql("duckdb")
    target = exp.table_(name, db=schema, quoted=True).sql("duckdb")
    staging = exp.to_identifier(f"dptool_load_{name}", quoted=True).sql("duckdb")
    cols = ", ".join(f"{exp.to_identifier(n, quoted=True).sql('duckdb')} {t}"
                     for n, t in zip(names, types, strict=True))
    con.execute(f"create schema if not exists {quoted_schema}")
    con.execute(f"create temp table {staging} ({cols})")
    marks = "(" + ", ".join("?" for _ in names) + ")"
    for start in range(0, len(rows), BATCH_ROWS):
        batch = rows[start:start + BATCH_ROWS]
        values = [_insertable(v) for row in batch for v in row]
        con.execute(f"insert into {staging} values " + ", ".join(marks for _ in batch), values)
    con.execute(f"create table {target} as select * from {staging} order by all")
    con.execute(f"drop table {staging}")


def _insertable(value):
    if isinstance(value, uuid.UUID | dict | list):
        return str(value)
    return value


_BY_NAME = (  # fragments of an adapter's type name -> DuckDB type, for a column of NULLs only
    (("BOOL",), "BOOLEAN"),
    (("INT",), "BIGINT"),
    (("DEC", "NUM", "FLOAT", "DOUBLE", "REAL"), "DOUBLE"),
    (("DATETIME", "TIMESTAMP"), "TIMESTAMP"),
    (("DATE",), "DATE"),
)


def _duckdb_type(type_name: str, values: list) -> str:
    sample = next((v for v in values if v is not None), None)
    if sample is None:
        upper = (type_name or "").upper()
        for fragments, duck in _BY_NAME:
            if any(f in upper for f in fragments):
                return duck
        return "VARCHAR"
    if isinstance(sample, bool):
        return "BOOLEAN"
    if isinstance(sample, int):
        return "BIGINT" if all(v is None or -2**63 <= v < 2**63 for v in values) else "HUGEINT"
    if isinstance(sample, float | Decimal):
        return "DOUBLE"
    if isinstance(sample, dt.datetime):
        return "TIMESTAMP"  # with a time zone: the session's wall-clock time, as the gold rows read it
    if isinstance(sample, dt.date):
        return "DATE"
    if isinstance(sample, dt.time):
        return "TIME"
    if isinstance(sample, dt.timedelta):
        return "INTERVAL"
    if isinstance(sample, bytes | bytearray | memoryview):
        return "BLOB"
    return "VARCHAR"
