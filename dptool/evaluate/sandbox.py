"""The SQL sandbox of agents: one read-only query per call, a time limit and a row cap (DESIGN §6).

Two walls. First, sqlglot: a statement runs only when it parses as exactly one SELECT/WITH query that
reads nothing but tables, CTEs and `range`/`generate_series`; everything else is refused with a
one-line error the agent sees. Second, DuckDB itself: the file is opened read-only, with file and
network access, extension loading and configuration changes disabled, so a statement that slipped
past the parser still cannot write, read files or change settings.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
import sqlglot
from sqlglot import exp

from dptool.errors import DptoolError

DEFAULT_TIMEOUT = 10.0
DEFAULT_MAX_ROWS = 100
MAX_CELL_CHARS = 200
MAX_OUTPUT_CHARS = 20_000
ONLY = "run_sql takes exactly one read-only SELECT or WITH query"

# DuckDB settings of the agent's connection: the second wall behind the parser
CONNECTION_CONFIG = {"enable_external_access": False, "autoinstall_known_extensions": False,
                     "autoload_known_extensions": False, "lock_configuration": True}

_STATEMENTS: list[tuple[tuple[type, ...], str]] = [
    ((exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.TruncateTable), "writes data"),
    ((exp.Create, exp.Drop, exp.Alter), "is DDL"),
    ((exp.Attach, exp.Detach), "opens another database"),
    ((exp.Copy, exp.Export), "reads or writes files"),
    ((exp.Pragma,), "reads or changes settings"),
    ((exp.Set,), "changes a setting"),
    ((exp.Install,), "installs or loads an extension"),
]
_EXTENSION, _SETTING, _DATABASE, _FILES = ("installs or loads an extension", "changes a setting",
                                          "opens another database", "reads or writes files")
_COMMANDS = {"LOAD": _EXTENSION, "INSTALL": _EXTENSION, "FORCE": _EXTENSION, "RESET": _SETTING, "SET": _SETTING,
             "PRAGMA": "reads or changes settings", "ATTACH": _DATABASE, "DETACH": _DATABASE, "COPY": _FILES,
             "EXPORT": _FILES, "IMPORT": _FILES}
# table functions that only generate values; every other function in FROM may read files or run SQL
_TABLE_FUNCTIONS = (exp.GenerateSeries, exp.Unnest)
_FILE_FUNCTION = re.compile(r"^(read_\w+|\w+_scan|glob|sniff_csv|parquet_\w+|query|query_table|getenv)$",
                            re.IGNORECASE)
_FILE_LIKE = re.compile(r"[/\\:*]|\.\w+$")


class Refused(Exception):
    """The statement is not one read-only query; the message is what the agent sees."""


@contextmanager
def _quiet_sqlglot() -> Iterator[None]:
    # sqlglot logs a warning for each statement it falls back to parsing as a Command; we refuse those
    logger = logging.getLogger("sqlglot")
    disabled, logger.disabled = logger.disabled, True
    try:
        yield
    finally:
        logger.disabled = disabled


def _function_name(node: exp.Func) -> str:
    return node.name if isinstance(node, exp.Anonymous) else node.sql_name()


def _first_word(sql: str) -> str:
    words = re.sub(r"--[^\n]*|/\*.*?\*/", " ", sql, flags=re.DOTALL).split()
    return words[0].upper().strip(";") if words else ""


def check_sql(sql: str) -> exp.Query:
    """The parsed query when `sql` is exactly one read-only query; Refused (with the reason) otherwise."""
    if not sql or not sql.strip():
        raise Refused(f"refused: empty SQL; {ONLY}")
    try:
        with _quiet_sqlglot():
            statements = [s for s in sqlglot.parse(sql, read="duckdb") if s is not None]
    except sqlglot.errors.ParseError as exc:
        word = _first_word(sql)
        if word in _COMMANDS:
            raise Refused(f"refused: {word} {_COMMANDS[word]}; {ONLY}") from None
        first = exc.errors[0] if exc.errors else {}
        where = f" at line {first.get('line')}, column {first.get('col')}" if first else ""
        raise Refused(f"cannot parse SQL{where}: {first.get('description') or 'syntax error'}") from None
    if not statements:
        raise Refused(f"refused: empty SQL; {ONLY}")
    if len(statements) != 1:
        raise Refused(f"refused: {len(statements)} statements; {ONLY} per call")
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        word = _first_word(sql)
        if word in ("", "WITH") or not word.isalpha():  # WITH x AS (...) INSERT ...: name the statement
            word = tree.key.upper()
        for kinds, what in _STATEMENTS:
            if isinstance(tree, kinds):
                raise Refused(f"refused: {word} {what}; {ONLY}")
        what = _COMMANDS.get(word, "is not a query")
        raise Refused(f"refused: {word or type(tree).__name__.upper()} {what}; {ONLY}")
    for node in tree.walk():
        for kinds, what in _STATEMENTS:
            if isinstance(node, kinds):
                raise Refused(f"refused: a nested {type(node).__name__.upper()} {what}; {ONLY}")
        if isinstance(node, exp.Command):
            raise Refused(f"refused: {node.name.upper()} is not a query; {ONLY}")
        if isinstance(node, exp.Func) and _FILE_FUNCTION.match(_function_name(node)):
            raise Refused(f"refused: {_function_name(node).lower()}() reads files, URLs or other SQL; "
                          f"query the warehouse tables")
        if isinstance(node, exp.Table):
            _check_table(node)
    return tree


def _check_table(table: exp.Table) -> None:
    source = table.this
    if isinstance(source, exp.Func) and not isinstance(source, _TABLE_FUNCTIONS):
        name = _function_name(source).lower()
        raise Refused(f"refused: table function {name}() may read files, URLs or other SQL; "
                      f"query the warehouse tables")
    # sqlglot reads DuckDB's FROM 'data.csv' as a table named data.csv, and DuckDB scans such names as files
    if isinstance(source, exp.Identifier) and _FILE_LIKE.search(source.name):
        raise Refused(f"refused: {source.name!r} names a file or URL; query the warehouse tables")


@dataclass
class Result:
    columns: list[str]
    rows: list[tuple]
    truncated: bool


class Sandbox:
    """The warehouse of a bundle, opened read-only for an agent."""

    def __init__(self, path: str | Path, *, timeout: float = DEFAULT_TIMEOUT, max_rows: int = DEFAULT_MAX_ROWS):
        self.path = Path(path)
        self.timeout = timeout
        self.max_rows = max_rows
        if not self.path.is_file():
            raise DptoolError(f"{self.path}: warehouse not found; expected a bundle written by `dptool generate`")
        try:
            self.con = duckdb.connect(str(self.path), read_only=True, config=CONNECTION_CONFIG)
        except duckdb.Error as exc:
            raise DptoolError(f"{self.path}: cannot open ({' '.join(str(exc).split())})") from None

    def query(self, sql: str) -> Result:
        """Run one checked query; Refused when it is not allowed, fails or runs out of time."""
        check_sql(sql)
        # a watchdog, not a DuckDB setting: DuckDB has no per-statement timeout
        watchdog = threading.Timer(self.timeout, self.con.interrupt)
        watchdog.start()
        try:
            cursor = self.con.execute(sql)
            columns = [d[0] for d in cursor.description or []]
            rows = cursor.fetchmany(self.max_rows + 1)
        except duckdb.InterruptException:
            raise Refused(f"query stopped after {self.timeout:g} s (the time limit); "
                          f"make it cheaper: filter, aggregate or add LIMIT") from None
        except duckdb.Error as exc:
            raise Refused(" ".join(str(exc).split())[:500]) from None
        finally:
            watchdog.cancel()
        return Result(columns, rows[: self.max_rows], len(rows) > self.max_rows)

    def run(self, sql: str) -> str:
        """The tool output an agent sees: a text table, or one line starting with "error:"."""
        try:
            result = self.query(sql)
        except Refused as exc:
            return f"error: {exc}"
        return render(result, self.max_rows)

    def schema(self) -> str:
        """The tables an agent may query, one line each: schema.table(column TYPE, ...)."""
        rows = self.con.execute(
            "select table_schema, table_name, column_name, data_type from information_schema.columns "
            "where table_schema not in ('information_schema', 'pg_catalog') "
            "order by table_schema, table_name, ordinal_position").fetchall()
        tables: dict[str, list[str]] = {}
        for schema, table, column, dtype in rows:
            tables.setdefault(f"{schema}.{table}", []).append(f"{column} {dtype}")
        return "\n".join(f"- {name}({', '.join(cols)})" for name, cols in tables.items())

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _cell(value) -> str:
    text = "NULL" if value is None else repr(value) if isinstance(value, float) else str(value)
    text = " ".join(text.split())
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def render(result: Result, max_rows: int) -> str:
    """Rows as a pipe-separated table with a closing line that says how many there are."""
    lines = [" | ".join(result.columns)]
    lines += [" | ".join(_cell(v) for v in row) for row in result.rows]
    if result.truncated:
        lines.append(f"(first {max_rows} rows shown; the result has more: aggregate, filter or add LIMIT)")
    else:
        lines.append(f"({len(result.rows)} row{'s' if len(result.rows) != 1 else ''})")
    text = "\n".join(lines)
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + "\n(output cut at 20,000 characters)"
    return text
