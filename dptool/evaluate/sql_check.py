"""The first wall of the SQL sandbox (dptool.evaluate.sandbox): sqlglot's reading of a statement.

A statement passes only when it parses as exactly one SELECT/WITH query that reads nothing but tables, CTEs and
`range`/`generate_series`; everything else is refused with a one-line error the agent sees, and so is a table name
DuckDB would read as a file (`passwd.csv`, `'x.json'`). It runs in the SQL worker, under the time limit; the server
never imports sqlglot for it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager

import sqlglot
from sqlglot import exp

from dptool.evaluate.sandbox import ONLY, too_long

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
# catalog views and functions that describe the machine, not the warehouse: the database file's path (the bundle's
# folder, where its tasks.jsonl lies), settings such as the temp and home directories, extensions, secrets
_MACHINE_VIEW = re.compile(r"^(duckdb_(databases|settings|extensions|secrets|temporary_files|memory|logs?|log_contexts"
                           r"|external_file_cache|variables|prepared_statements)|pragma_\w+|pg_settings|"
                           r"pg_prepared_statements)$", re.IGNORECASE)  # pg_settings: duckdb_settings by another name
_MACHINE_FUNCTION = re.compile(r"^(current_setting|pragma_\w+)$", re.IGNORECASE)
_PATH_CHARS = re.compile(r"[/\\:*]")
# DuckDB reads a table name it cannot find as a file path, its parts joined by dots: `from passwd.csv` is
# `read_csv('passwd.csv')`. A dotted name whose last part is a data file's extension is refused as a file.
_FILE_EXTENSIONS = frozenset(("csv", "tsv", "txt", "tbl", "dat", "psv", "parquet", "pq", "json", "jsonl", "ndjson",
                              "geojson", "gz", "gzip", "zst", "zstd", "bz2", "xz", "lz4", "zip", "xlsx", "xls",
                              "arrow", "ipc", "feather", "avro", "orc", "db", "duckdb", "sqlite", "sqlite3", "shp",
                              "gpkg"))


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
    refusal = too_long(sql)
    if refusal:
        raise Refused(refusal)
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
    except sqlglot.errors.TokenError as exc:  # an unclosed quote or comment
        word = _first_word(sql)
        if word in _COMMANDS:
            raise Refused(f"refused: {word} {_COMMANDS[word]}; {ONLY}") from None
        raise Refused(f"cannot parse SQL: {' '.join(str(exc).split())[:200]} (an unclosed quote or comment?)") from None
    except RecursionError:
        raise Refused("cannot parse SQL: nested too deeply; flatten the parentheses or use a CTE") from None
    # `select 1; -- done`: what follows the last semicolon is only a comment, not a second statement
    statements = [s for s in statements if not isinstance(s, exp.Semicolon)]
    if not statements:
        raise Refused(f"refused: empty SQL; {ONLY}")
    if len(statements) != 1:
        raise Refused(f"refused: {len(statements)} statements; {ONLY} per call")
    tree = statements[0]
    try:
        return _check_tree(sql, tree)
    except RecursionError:
        raise Refused("cannot parse SQL: nested too deeply; flatten the parentheses or use a CTE") from None


def _check_tree(sql: str, tree: exp.Expression) -> exp.Query:
    if not isinstance(tree, exp.Query):
        word = _first_word(sql)
        if word in ("", "WITH") or not word.isalpha():  # WITH x AS (...) INSERT ...: name the statement
            word = tree.key.upper()
        for kinds, what in _STATEMENTS:
            if isinstance(tree, kinds):
                raise Refused(f"refused: {word} {what}; {ONLY}")
        what = _COMMANDS.get(word, "is not a query")
        raise Refused(f"refused: {word or type(tree).__name__.upper()} {what}; {ONLY}")
    ctes = frozenset(cte.alias_or_name.casefold() for cte in tree.find_all(exp.CTE))
    for node in tree.walk():
        for kinds, what in _STATEMENTS:
            if isinstance(node, kinds):
                raise Refused(f"refused: a nested {type(node).__name__.upper()} {what}; {ONLY}")
        if isinstance(node, exp.Command):
            raise Refused(f"refused: {node.name.upper()} is not a query; {ONLY}")
        if isinstance(node, exp.Func) and _MACHINE_FUNCTION.match(_function_name(node)):
            raise Refused(f"refused: {_function_name(node).lower()}() describes this machine, not the warehouse; "
                          "query the warehouse tables")
        if isinstance(node, exp.Func) and _FILE_FUNCTION.match(_function_name(node)):
            raise Refused(f"refused: {_function_name(node).lower()}() reads files, URLs or other SQL; "
                          f"query the warehouse tables")
        if isinstance(node, exp.Table):
            _check_table(node, ctes)
    return tree


def _check_table(table: exp.Table, ctes: frozenset[str]) -> None:
    source = table.this
    if isinstance(source, exp.Func) and not isinstance(source, _TABLE_FUNCTIONS):
        name = _function_name(source).lower()
        raise Refused(f"refused: table function {name}() may read files, URLs or other SQL; "
                      f"query the warehouse tables")
    parts = [p.name for p in table.parts]
    if len(parts) == 1 and parts[0].casefold() in ctes:
        return  # a CTE of the query, whatever its name ("q1.2018"): DuckDB reads it before any file
    if parts and _MACHINE_VIEW.match(parts[-1]):
        raise Refused(f"refused: {parts[-1]} describes this machine (files, settings), not the warehouse; query "
                      "the warehouse tables or information_schema")
    # sqlglot reads DuckDB's FROM 'data.csv' as a table named data.csv, and DuckDB scans such names as files
    if isinstance(source, exp.Identifier) and _FILE_LIKE.search(source.name):
        raise Refused(f"refused: {source.name!r} names a file or URL; query the warehouse tables")
    if len(parts) > 1 and (parts[-1].casefold() in _FILE_EXTENSIONS or any(_PATH_CHARS.search(p) for p in parts)):
        raise Refused(f"refused: {'.'.join(parts)!r} names a file (DuckDB reads a table it cannot find as a file "
                      "path); query the warehouse tables")
