"""One interface to the data: a DuckDB file (the embedded default), or any dbt target through its adapter."""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import duckdb
import sqlglot
from sqlglot import exp

from dptool.errors import DptoolError
from dptool.project.dbt import Connection
from dptool.sql import SharedQuery

MEMORY_LIMIT_ENV = "DPTOOL_DUCKDB_MEMORY_LIMIT"


# DuckDB's own default is 80 % of the machine's memory for each database it opens, and generate has two open at once
# (the target's and the bundle's, whose reproduction runs beside the next round): half of that each
DEFAULT_MEMORY_LIMIT = "40%"


def duckdb_config() -> dict[str, str]:
    """DuckDB settings of every file dptool opens: memory_limit from DPTOOL_DUCKDB_MEMORY_LIMIT, else 40 % of the
    machine's memory (past it, DuckDB spills to the temp directory)."""
    limit = os.environ.get(MEMORY_LIMIT_ENV, "").strip()
    if limit and not re.fullmatch(r"\d+(\.\d+)?\s*(%|[kmgt]i?b)", limit, re.IGNORECASE):
        raise DptoolError(f"{MEMORY_LIMIT_ENV}={limit!r}: not an amount of memory (e.g. 4GB or 50%)")
    return {"memory_limit": limit or DEFAULT_MEMORY_LIMIT}


def missing_hint(exc: Exception) -> str:
    """What to do when a query meets a table that is not there: build it."""
    return " (has `dbt build` run for this target?)" if "does not exist" in str(exc) else ""


class Warehouse:
    """A DuckDB database file, opened read-only unless asked otherwise (`Warehouse.of` picks the kind).

    Read-only, the file is attached to an in-memory database (its tables keep their names): that is where
    `query_shared` keeps the CTEs several queries read. With `keep_shared`, it keeps them until the warehouse is
    closed, for later calls to read too, up to KEPT_BYTES of them.
    """

    dialect = "duckdb"

    def __init__(self, path: str | Path, read_only: bool = True, keep_shared: bool = False):
        self.path = Path(path)
        if read_only and not self.path.is_file():
            raise DptoolError(f"{self.path}: database file not found; run `dbt build` first")
        self._use = None  # the statement that makes the attached file every connection's default database
        try:
            if read_only:
                # where DuckDB spills a large query, as it does for the file opened directly (not ./.tmp)
                self.con = duckdb.connect(config={"temp_directory": f"{self.path}.tmp", **duckdb_config()})
                try:
                    self._attach()
                except duckdb.Error:  # a file named like a database DuckDB holds itself (memory.duckdb)
                    self.con.close()
                    self.con, self._use = duckdb.connect(str(self.path), read_only=True, config=duckdb_config()), None
            else:
                self.con = duckdb.connect(str(self.path), config=duckdb_config())
        except duckdb.Error as exc:
            raise DptoolError(f"{self.path}: cannot open ({' '.join(str(exc).split())})") from None
        self._halts: set = set()  # how to stop the queries of each query_each still running
        self._numbers = itertools.count(1)  # of the tables of shared CTEs (next() is atomic: threads share it)
        self._kept: dict[tuple, str] | None = {} if keep_shared else None  # CTE key -> the table kept of it
        self._held = False  # while `keeping` hands it out: its users' close() leaves it open

    def _attach(self) -> None:
        self.con.execute(f"attach {exp.Literal.string(str(self.path)).sql('duckdb')} (read_only)")
        names = [n for (n,) in self.con.execute(
            "select database_name from duckdb_databases() where not internal and database_name <> 'memory'"
        ).fetchall()]
        if len(names) != 1:
            raise duckdb.Error(f"attached {names!r}")
        self._use = f"use {exp.to_identifier(names[0], quoted=True).sql('duckdb')}"
        self.con.execute(self._use)

    @classmethod
    def of(cls, connection: Connection) -> Warehouse:
        """The warehouse behind a dbt target: its DuckDB file, or any other target through its dbt adapter
        (inside `keeping`, the one it holds)."""
        if connection.adapter_type == "duckdb" and connection.path and connection.path != ":memory:":
            return _HELD.get(str(Path(connection.path).resolve())) or cls(connection.path)
        from dptool.project.adapter_warehouse import AdapterWarehouse

        return AdapterWarehouse.of(connection)  # the same query() and dialect, through dbt

    def query(self, sql: str) -> tuple[list[str], list[tuple]]:
        """Run one query; return its column names and rows.

        From the main thread the query runs on a thread of its own (`query_each`) while the main thread waits
        where Python handles a Ctrl-C: inside DuckDB's execute, a SIGINT was lost under load (DuckDB checks for
        one only now and then), and the command ran on with the query."""
        if threading.current_thread() is threading.main_thread():
            with contextlib.closing(self.query_each([sql])) as results:
                result = next(results)
        else:  # a worker of the caller's own: no signal reaches it
            result = self._fetch(self.con, sql)
        if isinstance(result, DptoolError):
            raise result
        return result

    def query_each(self, queries: Iterable[str]) -> Iterator[tuple[list[str], list[tuple]] | DptoolError]:
        """Run many queries, as many at a time as there are cores; yield each one's columns and rows, or its
        error, in the order given.

        DuckDB runs a small query on one core, and releases Python's lock while it runs: the queries of a
        batch share the machine, and the caller works on the rows of one while the next ones run. A caller
        that stops early (Ctrl-C, an error, a break) interrupts the queries still running instead of waiting.
        """
        return self._each(queries, lambda cursor, sql, _stopped: self._fetch(cursor, sql))

    def query_shared(self, queries: Iterable[SharedQuery]) -> Iterator[tuple[list[str], list[tuple]] | DptoolError]:
        """`query_each` of the queries' texts, computing once each shared CTE that more than one of them reads.

        Such a CTE (an ephemeral model every gold query of a metric inlines, often the costliest part of
        it) is computed into a table of the in-memory database when a query first needs it, and each query
        runs with that CTE's body reading the table; the table is dropped when the last query that reads it
        is done. A CTE whose table cannot be made (an error) stays in its queries as it is, to report the error.
        """
        queries = list(queries)
        if self._use is None:
            return self.query_each(q.sql for q in queries)
        return self._each(enumerate(queries), _SharedCtes(self, queries).run)

    def _fetch(self, cursor, sql: str):
        try:
            cur = cursor.execute(sql)
            return [d[0] for d in cur.description], cur.fetchall()
        except duckdb.Error as exc:
            return DptoolError(f"{self.path}: query failed: {' '.join(str(exc).split())}{missing_hint(exc)}")

    def _each(self, items: Iterable, run: Callable) -> Iterator:
        """`run(cursor, item, stopped)` of each item on a pool of threads, each with its own cursor; results in
        order. `stopped` is set when the caller stops: a run of several statements checks it between them."""
        local = threading.local()
        cursors = []
        lock = threading.Lock()
        stopped = threading.Event()

        def work(item):
            if stopped.is_set():  # a query that had not started when the caller stopped
                return DptoolError(f"{self.path}: query interrupted")
            cursor = getattr(local, "cursor", None)
            if cursor is None:
                with lock:
                    cursor = local.cursor = self.con.cursor()
                    cursors.append(cursor)
                if self._use is not None:  # a cursor starts in the in-memory database
                    cursor.execute(self._use)
            return run(cursor, item, stopped)

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
            yield from pool.map(work, items)
            finished = True
        finally:
            if finished:
                pool.shutdown(wait=True)
            halt()

    def _new_table(self) -> str:
        return f"memory.main.dptool_shared_{next(self._numbers)}"

    def interrupt(self) -> None:
        """Stop the queries of every query_each still running, from any thread (their callers get errors); the
        connection stays open."""
        for halt in list(self._halts):
            halt()

    def close(self) -> None:
        self.interrupt()  # a query_each whose caller stopped without closing it: its queries stop
        if not self._held:  # one `keeping` holds stays open for the next caller
            self.con.close()

    @classmethod
    @contextlib.contextmanager
    def keeping(cls, connection: Connection) -> Iterator[None]:
        """Within the block, `Warehouse.of(connection)` hands out one open warehouse (a DuckDB target's) whose
        `query_shared` keeps the table of each CTE it computes, for every later call to read: the ephemeral models
        the probes, the gold and the support queries of every round inline are computed once in the block, not
        once per call. The tables go when the block ends."""
        if not (connection.adapter_type == "duckdb" and connection.path and connection.path != ":memory:"):
            yield  # another target computes its CTEs itself
            return
        key = str(Path(connection.path).resolve())
        if key in _HELD:
            yield
            return
        held = cls(connection.path, keep_shared=True)
        held._held = True
        _HELD[key] = held
        try:
            yield
        finally:
            del _HELD[key]
            held._held = False
            held.close()

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _SharedCtes:
    """The shared CTEs of one `query_shared` call: which to compute, their tables, who still reads them."""

    def __init__(self, warehouse: Warehouse, queries: list[SharedQuery]):
        self.warehouse = warehouse
        self.keys = [_keys(q.ctes) for q in queries]
        self.readers = Counter(k for keys in self.keys for k in set(keys))
        self.kept = warehouse._kept  # the tables earlier calls kept, and where this one keeps its own (or None)
        # decided once: a count that falls as queries finish would leave the last reader computing the CTE again
        # a CTE read by one query stays in it, unless a table of it is kept (made by an earlier call, or for a later);
        # one that only picks and filters the rows of what it reads stays too: a table of it costs more than a scan
        self.shared = {k for k, n in self.readers.items()
                       if (n > 1 or self.kept is not None) and worth_a_table(k[1])}
        self.lock = threading.Lock()
        self.tables: dict[tuple, Future] = {}
        for k in self.shared & (self.kept or {}).keys():
            self.tables[k] = Future()
            self.tables[k].set_result(self.kept[k])

    def run(self, cursor, item: tuple[int, SharedQuery], stopped: threading.Event):
        i, query = item
        keys = self.keys[i]
        ctes: list[tuple[str, str]] = []
        try:
            for key, (name, body) in zip(keys, query.ctes, strict=True):
                table = self._table(cursor, key, ctes, name, body) if key in self.shared else None
                ctes.append((name, f"select * from {table}") if table else (name, body))
            if stopped.is_set():  # a table's statement was interrupted: the query is not started
                return DptoolError(f"{self.warehouse.path}: query interrupted")
            return self.warehouse._fetch(cursor, query.assemble(tuple(ctes)))
        finally:
            self._release(cursor, keys)

    def _table(self, cursor, key: tuple, before: list[tuple[str, str]], name: str, body: str) -> str | None:
        with self.lock:
            future = self.tables.get(key)
            mine = future is None
            if mine:
                future = self.tables[key] = Future()
        if not mine:
            return future.result()
        table = None
        try:
            select = "with " + ", ".join(f"{n} as (\n{b}\n)" for n, b in [*before, (name, body)]) + \
                f"\nselect * from {name}"
            table = self.warehouse._new_table()
            cursor.execute(f"create table {table} as {select}")
        except duckdb.Error:
            table = None  # the query meets the same error, and reports it, with the CTE in place
        finally:
            if table is not None and self.kept is not None and _room(cursor):
                with self.lock:
                    self.kept[key] = table
            future.set_result(table)  # those waiting for it go on, whatever happened
        return table

    def _release(self, cursor, keys: list[tuple]) -> None:
        for key in set(keys):
            with self.lock:
                self.readers[key] -= 1
                last = self.readers[key] == 0
                future = self.tables.pop(key, None) if last else None
            if future is not None and future.result() and (self.kept is None or key not in self.kept):
                with contextlib.suppress(duckdb.Error):  # interrupted: the in-memory database goes with the connection
                    cursor.execute(f"drop table if exists {future.result()}")


_HELD: dict[str, Warehouse] = {}  # resolved path -> the warehouse `Warehouse.keeping` holds open
# the in-memory tables a warehouse keeps across calls, at most: past it, a call's tables go when it is done (memory
# stays bounded on data of any size; what is kept only saves time)
KEPT_BYTES = 1 << 30


def _room(cursor) -> bool:
    """Is there room under KEPT_BYTES for one more kept table (the in-memory tables now, this call's included)?"""
    try:
        (used,) = cursor.execute("select coalesce(sum(memory_usage_bytes), 0) from duckdb_memory() "
                                 "where tag = 'IN_MEMORY_TABLE'").fetchone()
    except duckdb.Error:  # interrupted: the table goes with its call
        return False
    return used <= KEPT_BYTES


@functools.lru_cache(maxsize=4096)
def worth_a_table(body: str) -> bool:
    """Does a CTE body do work a table of it saves: a join, an aggregate, a window, DISTINCT, a set operation, a sort
    or a query inside it? A body that only picks, computes and filters the columns of one relation row by row is as
    cheap to scan again as its table, and its table would be a copy of every row (8.8M transactions: a GiB of
    memory)."""
    try:
        tree = sqlglot.parse_one(body, dialect="duckdb")
    except sqlglot.errors.SqlglotError:
        return True  # unread: computed once, as before
    if tree is None:
        return True
    return any(tree.find_all(exp.Join, exp.Group, exp.AggFunc, exp.Window, exp.Distinct, exp.SetOperation, exp.Order,
                             exp.Lateral, exp.Unnest)) or any(q is not tree for q in tree.find_all(exp.Query))


def _keys(ctes: tuple[tuple[str, str], ...]) -> list[tuple]:
    """What identifies each CTE across queries: its name, body and the keys of the earlier CTEs it reads."""
    keys: list[tuple] = []
    for i, (name, body) in enumerate(ctes):
        reads = tuple(keys[j] for j, (earlier, _) in enumerate(ctes[:i]) if _reads_name(body, earlier))
        keys.append((name, body, reads))
    return keys


def _reads_name(body: str, name: str) -> bool:
    return re.search(r"(?<![\w$])" + re.escape(name) + r"(?![\w$])", body, re.IGNORECASE) is not None


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
