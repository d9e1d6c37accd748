"""Data products in DP-Bench's shape, and their JSON file.

DP-Bench (§2, §4.3) describes a data product as a set of tables named after the database's tables, each
holding non-derived columns (columns of that table, selected as they are) and derived columns (a name, a
description and the SQL that computes it from the database: its provenance). A DP answers its data product
request (DPR) and a set of questions, each with a gold SQL over the database. One file holds the databases
(what the DPs are built from: tables, typed and described columns, foreign keys) and the data products:

    {"format": "dp-bench", "version": 1, "dialect": "duckdb",
     "databases": [{"db_id": "ecommerce",
                    "tables": [{"table_name": "orders", "description": "...",
                                "columns": [{"column_name": "order_id", "type": "VARCHAR", "description": "..."}]}],
                    "foreign_keys": [{"table": "orders", "column": "customer_id",
                                      "ref_table": "customers", "ref_column": "customer_id"}]}],
     "data_products": [{"dp_id": "delivery_performance", "db_id": "ecommerce", "dpr": "Collect data ...",
                        "tables": [{"table_name": "orders", "columns": ["order_id"],
                                    "derived_columns": [{"column_name": "delivery_days", "description": "...",
                                                         "provenance": "SELECT ... FROM orders AS o",
                                                         "source_columns": ["orders.order_purchase_timestamp"]}]}],
                        "questions": [{"question": "...", "sql": "SELECT ...", "dp_sql": "SELECT ..."}],
                        "dbt_models": ["model.dptool_demo.dp_delivery_performance"]}]}

`source_columns` are the `table.column`s the provenance reads; `dialect` is the dialect of every SQL text.
Files are written with sorted keys and lists in a fixed order, so the same DPs give the same bytes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from dptool.errors import DptoolError

FORMAT = "dp-bench"
VERSION = 1

ColumnRef = tuple[str, str]  # (table, column), lower-cased


@dataclass(frozen=True)
class Column:
    name: str
    type: str = ""
    description: str = ""


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    description: str = ""


@dataclass(frozen=True)
class ForeignKey:
    table: str
    column: str
    ref_table: str
    ref_column: str


@dataclass(frozen=True)
class Database:
    """The tables a data product is built from (in dptool: one domain's agent-visible tables)."""

    id: str
    tables: tuple[Table, ...]
    foreign_keys: tuple[ForeignKey, ...] = ()

    @property
    def n_columns(self) -> int:
        return sum(len(t.columns) for t in self.tables)

    def column_refs(self) -> set[ColumnRef]:
        return {(t.name.lower(), c.name.lower()) for t in self.tables for c in t.columns}

    def schema(self) -> dict[str, dict[str, str]]:
        """{table: {column: type}}, as sqlglot's qualify takes it."""
        return {t.name: {c.name: c.type or "unknown" for c in t.columns} for t in self.tables}

    def table(self, name: str) -> Table | None:
        return next((t for t in self.tables if t.name.lower() == name.lower()), None)


@dataclass(frozen=True)
class DerivedColumn:
    name: str
    provenance: str  # SQL over the database's tables
    source_columns: tuple[ColumnRef, ...]
    description: str = ""


@dataclass(frozen=True)
class DPTable:
    name: str  # a table of the database
    columns: tuple[str, ...] = ()  # non-derived: columns of that table
    derived_columns: tuple[DerivedColumn, ...] = ()


@dataclass(frozen=True)
class Question:
    question: str
    sql: str  # gold SQL over the database
    dp_sql: str = ""  # the same answer from the data product's own tables, when known


@dataclass(frozen=True)
class DataProduct:
    id: str
    db_id: str
    request: str
    tables: tuple[DPTable, ...]
    questions: tuple[Question, ...] = ()
    dbt_models: tuple[str, ...] = ()

    def columns(self) -> set[ColumnRef]:
        """The non-derived columns, as (table, column)."""
        return {(t.name.lower(), c.lower()) for t in self.tables for c in t.columns}

    def derived_columns(self) -> list[DerivedColumn]:
        return [d for t in self.tables for d in t.derived_columns]

    def columns_with_provenance(self) -> set[ColumnRef]:
        """Non-derived columns plus every column a derived column's provenance reads (DP-Bench §5.1)."""
        found = self.columns()
        for derived in self.derived_columns():
            found |= set(derived.source_columns)
        return found


@dataclass
class Document:
    """One DP-Bench file: databases and data products."""

    dialect: str = "duckdb"
    databases: dict[str, Database] = field(default_factory=dict)
    data_products: list[DataProduct] = field(default_factory=list)


def to_dict(doc: Document) -> dict:
    return {
        "format": FORMAT,
        "version": VERSION,
        "dialect": doc.dialect,
        "databases": [_database_dict(db) for _, db in sorted(doc.databases.items())],
        "data_products": [_dp_dict(dp) for dp in sorted(doc.data_products, key=lambda d: (d.db_id, d.id))],
    }


def dumps(doc: Document) -> str:
    return json.dumps(to_dict(doc), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write(doc: Document, path: str | Path) -> Path:
    """Write the file atomically: a reader never sees half of it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dumps(doc), encoding="utf-8")
    os.replace(tmp, path)
    return path


def read(path: str | Path) -> Document:
    """Read a DP-Bench file; a malformed one is a DptoolError naming the file and the key."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DptoolError(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise DptoolError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    return from_dict(data, str(path))


def from_dict(data: dict, where: str = "<json>") -> Document:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DptoolError(f"{where}: not a DP-Bench file (expected \"format\": \"{FORMAT}\")")
    if data.get("version") != VERSION:
        raise DptoolError(f"{where}: version {data.get('version')!r} is not supported (expected {VERSION})")
    doc = Document(dialect=str(data.get("dialect") or "duckdb"))
    for i, raw in enumerate(_list(data, "databases", where)):
        db = _database(raw, f"{where}: databases[{i}]")
        doc.databases[db.id] = db
    for i, raw in enumerate(_list(data, "data_products", where)):
        doc.data_products.append(_data_product(raw, f"{where}: data_products[{i}]"))
    seen: set[str] = set()
    for dp in doc.data_products:
        if dp.id in seen:
            raise DptoolError(f"{where}: data product {dp.id!r} appears twice")
        seen.add(dp.id)
    return doc


def _list(data: dict, key: str, where: str) -> list:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise DptoolError(f"{where}: {key} must be a list")
    return value


def _str(data: dict, key: str, where: str, required: bool = True) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise DptoolError(f"{where}: {key} must be a non-empty string")
    return value


def _database(raw: dict, where: str) -> Database:
    if not isinstance(raw, dict):
        raise DptoolError(f"{where}: must be an object")
    tables = []
    for i, t in enumerate(_list(raw, "tables", where)):
        tw = f"{where}.tables[{i}]"
        columns = tuple(Column(_str(c, "column_name", f"{tw}.columns[{j}]"), str(c.get("type") or ""),
                               str(c.get("description") or ""))
                        for j, c in enumerate(_list(t, "columns", tw)))
        tables.append(Table(_str(t, "table_name", tw), columns, str(t.get("description") or "")))
    fks = tuple(ForeignKey(*(_str(fk, k, f"{where}.foreign_keys[{i}]")
                             for k in ("table", "column", "ref_table", "ref_column")))
                for i, fk in enumerate(_list(raw, "foreign_keys", where)))
    return Database(_str(raw, "db_id", where), tuple(tables), fks)


def _column_ref(text: str, where: str) -> ColumnRef:
    table, dot, column = text.rpartition(".")
    if not dot or not table or not column:
        raise DptoolError(f"{where}: {text!r} is not table.column")
    return table.lower(), column.lower()


def _data_product(raw: dict, where: str) -> DataProduct:
    if not isinstance(raw, dict):
        raise DptoolError(f"{where}: must be an object")
    tables = []
    for i, t in enumerate(_list(raw, "tables", where)):
        tw = f"{where}.tables[{i}]"
        columns = []
        for j, c in enumerate(_list(t, "columns", tw)):
            if not isinstance(c, str) or not c:
                raise DptoolError(f"{tw}.columns[{j}]: must be a column name")
            columns.append(c)
        derived = []
        for j, d in enumerate(_list(t, "derived_columns", tw)):
            dw = f"{tw}.derived_columns[{j}]"
            sources = tuple(_column_ref(s, f"{dw}.source_columns") for s in _list(d, "source_columns", dw))
            derived.append(DerivedColumn(_str(d, "column_name", dw), _str(d, "provenance", dw), sources,
                                         _str(d, "description", dw, required=False)))
        tables.append(DPTable(_str(t, "table_name", tw), tuple(columns), tuple(derived)))
    questions = []
    for i, q in enumerate(_list(raw, "questions", where)):
        qw = f"{where}.questions[{i}]"
        questions.append(Question(_str(q, "question", qw), _str(q, "sql", qw), _str(q, "dp_sql", qw, required=False)))
    models = tuple(str(m) for m in _list(raw, "dbt_models", where))
    return DataProduct(_str(raw, "dp_id", where), _str(raw, "db_id", where), _str(raw, "dpr", where, required=False),
                       tuple(tables), tuple(questions), models)


def _database_dict(db: Database) -> dict:
    return {
        "db_id": db.id,
        "tables": [{"table_name": t.name, "description": t.description,
                    "columns": [{"column_name": c.name, "type": c.type, "description": c.description}
                                for c in t.columns]}
                   for t in db.tables],
        "foreign_keys": [{"table": fk.table, "column": fk.column, "ref_table": fk.ref_table,
                          "ref_column": fk.ref_column}
                         for fk in sorted(db.foreign_keys, key=lambda f: (f.table, f.column, f.ref_table))],
    }


def _dp_dict(dp: DataProduct) -> dict:
    return {
        "dp_id": dp.id,
        "db_id": dp.db_id,
        "dpr": dp.request,
        "tables": [{"table_name": t.name, "columns": list(t.columns),
                    "derived_columns": [{"column_name": d.name, "description": d.description,
                                         "provenance": d.provenance,
                                         "source_columns": [f"{a}.{b}" for a, b in sorted(d.source_columns)]}
                                        for d in t.derived_columns]}
                   for t in dp.tables],
        "questions": [{"question": q.question, "sql": q.sql, **({"dp_sql": q.dp_sql} if q.dp_sql else {})}
                      for q in dp.questions],
        "dbt_models": list(dp.dbt_models),
    }
