"""One interface to the data: a DuckDB file (the embedded default), or any dbt target through its adapter."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import sqlglot
from sqlglot import exp

from dptool.errors import DptoolError
from dptool.project.dbt import Connection


def missing_hint(exc: Exception) -> str:
    """What to do when a query meets a table that is not there: build it."""
    return " (has `dbt build` run for this target?)" if "does not exist" in str(exc) else ""


class Warehouse:
    """A DuckDB database file, opened read-only unless asked otherwise (`Warehouse.of` picks the kind)."""

    dialect = "duckdb"

    def __init__(self, path: str | Path, read_only: bool = True):
        self.path = Path(path)
        if read_only and not self.path.is_file():
            raise DptoolError(f"{self.path}: database file not found; run `dbt build` first")
        try:
            self.con = duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.Error as exc:
            raise DptoolError(f"{self.path}: cannot open ({' '.join(str(exc).split())})") from None
        self._halts: set = set()  # how to stop the queries of each query_each still running

    @classmethod
    def of(cls, connection: Connection) -> Warehouse:
        """The warehouse behind a dbt target: its DuckDB file, or any other target through its dbt adapter."""
        if connection.adapter_type == "duckdb" and connection.path and connection.path != ":memory:":
            return cls(connection.path)
        from dptool.project.adapter_warehouse import AdapterWarehouse

        return AdapterWarehouse.of(connection)  # the same query() and dialect, through dbt

    def query(self, sql: str) -> tuple[list[str], list[tuple]]:
        """Run one query; return its column names and rows."""
        try:
            cur = self.con.execute(sql)
        except duckdb.Error as exc:
            raise DptoolError(f"{self.path}: query failed: {' '.join(str(exc).split())}{missing_hint(exc)}") from None
        return [d[0] for d in cur.description], cur.fetchall()

    def query_each(self, queries: Iterable[str]) -> Iterator[tuple[list[str], list[tuple]] | DptoolError]:
        """Run many queries, as many at a time as there are cores; yield each one's columns and rows, or its
        error, in the order given.

        DuckDB runs a small query on one core, and releases Python's lock while it runs: the queries of a
        batch share the machine, and the caller works on the rows of one while the next ones run. A caller
        that stops early (Ctrl-C, an error, a break) interrupts the queries still running instead of waiting.
        """
        local = threading.local()
        cursors = []
        lock = threading.Lock()
        stopped = threading.Event()

        def run(sql: str):
            if stopped.is_set():  # a query that had not started when the caller stopped
                return DptoolError(f"{self.path}: query interrupted")
            cursor = getattr(local, "cursor", None)
            if cursor is None:
                with lock:
                    cursor = local.cursor = self.con.cursor()
                    cursors.append(cursor)
            try:
                cur = cursor.execute(sql)
                return [d[0] for d in cur.description], cur.fetchall()
            except duckdb.Error as exc:
                return DptoolError(f"{self.path}: query failed: {' '.join(str(exc).split())}{missing_hint(exc)}")

        def stop() -> None:
            stopped.set()
            with lock:
                for cursor in cursors:
                    cursor.interrupt()

        def halt() -> None:  # idempotent: called by this generator's end, or by close() if that comes first
            stop()
            # the worker threads are joined here, not at the interpreter's exit: an interrupted query ends at once
            pool.shutdown(wait=True, cancel_futures=True)
            self._halts.discard(halt)
            with lock:
                for cursor in cursors:
                    cursor.close()
                cursors.clear()

        pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="dptool-sql")
        self._halts.add(halt)
        finished = False
        try:
            yield from pool.map(run, queries)
            finished = True
        finally:
            if finished:
                pool.shutdown(wait=True)
            halt()

    def close(self) -> None:
        for halt in list(self._halts):  # a query_each whose caller stopped without closing it: its queries stop
            halt()
        self.con.close()

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def export_tables(source: str | Path | Connection, tables: list[tuple[str, str, str]], dest: str | Path) -> None:
    """Copy tables into a new DuckDB file: (relation_name in the source, schema, name) each.

    `source` is a DuckDB file, or the connection of a dbt target (a DuckDB file, or any other target,
    read through its dbt adapter). Rows are written in a total order, so that a rerun copies the same
    data in the same order.
    """
    if isinstance(source, Connection):
        if source.adapter_type != "duckdb" or not source.path or source.path == ":memory:":
            from dptool.project.adapter_warehouse import export_from_adapter

            export_from_adapter(source, tables, dest)
            return
        source = source.path
    source_path = source
    dest = Path(dest)
    if dest.exists():
        dest.unlink()
    con = duckdb.connect(str(dest))
    try:
        con.execute(f"attach {exp.Literal.string(str(source_path)).sql('duckdb')} as dptool_src (read_only)")
        for relation_name, schema, name in tables:
            source = sqlglot.to_table(relation_name, dialect="duckdb")
            source.set("catalog", exp.to_identifier("dptool_src"))
            target = exp.table_(name, db=schema, quoted=True)
            con.execute(f"create schema if not exists {exp.to_identifier(schema, quoted=True).sql('duckdb')}")
            con.execute(f"create table {target.sql('duckdb')} as select * from {source.sql('duckdb')} order by all")
        con.execute("detach dptool_src")
        con.execute("checkpoint")
    finally:
        con.close()
