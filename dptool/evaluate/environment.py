"""The benchmark's environment for the user's own agent: its tools and its task flow, independent of MCP.

`dptool serve` (MCP) and the inspect-ai task serve the same `Environment`. Its tools are named, with their
arguments, as dbt-mcp names the same job, so an agent built on dbt-mcp runs unchanged where it can:
`execute_sql(sql)` runs one read-only query on the bundle's warehouse through the sandbox (its limits, its one-line
errors); `get_all_models` and `get_model_details(name)` show the tables and their columns; `list_metrics(search)`
the metric catalog (metrics.md). The knowledge base has dptool's own: `search_kb(query)` (BM25, as `eval`'s agent
has it) and `get_kb_document(path)`. The kb tools read the open task's domain only (kb/<domain>/: its catalog and
policies; all of kb/ while no task is open), so a policy of another domain with the same name is never found. A
tool's reply is computed from the warehouse, that kb and the agent's own arguments, never from the task itself, so
no tool can tell an agent more of the open task than its domain, let alone its answer.

The task flow that hands tasks out and records every call (`ServedRun`) is dptool.evaluate.served_run.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dptool.errors import DptoolError
from dptool.evaluate.agent import load_prompts
from dptool.evaluate.kb import DEFAULT_K, KnowledgeBase, domain_folders
from dptool.evaluate.sandbox import DEFAULT_MAX_ROWS, DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT, Sandbox
from dptool.llm.client import PROMPTS

PROMPT_VERSION = "v1"
MAX_K = 20  # passages search_kb returns at most
MAX_QUERY_CHARS = 2_000  # BM25 over a query of megabytes takes seconds, and the server answers one call at a time
SUBMIT, NEXT = "submit_answer", "next_task"


@dataclass(frozen=True)
class ToolSpec:
    """What an agent reads about a tool: its description and the description of each argument."""

    description: str
    arguments: dict[str, str] = field(default_factory=dict)


TOOLS: dict[str, ToolSpec] = {
    "execute_sql": ToolSpec(
        "Run one read-only DuckDB query (a single SELECT or WITH) on the warehouse; returns the rows as a "
        "pipe-separated table, at most the row limit, or one line starting with 'error:'. Name tables as "
        "schema.table (see get_all_models).",
        {"sql": "One SELECT or WITH query, e.g. SELECT count(*) FROM ecommerce.orders."}),
    "get_all_models": ToolSpec(
        "List the warehouse tables an agent may query, one line each: schema.table(column TYPE, ...)."),
    "get_model_details": ToolSpec(
        "Describe one warehouse table: its columns with their types, and its row count.",
        {"name": "The table, as schema.table (or the table name alone when no other schema has it)."}),
    "list_metrics": ToolSpec(
        "The metric catalog (metrics.md of the open task's domain): every metric's name, domain, unit and formula; "
        "with `search`, the full entry of each metric whose name contains one of the words (period, row grain, "
        "policies, description).",
        {"search": "Optional: part of a metric name, or a list of them; case does not matter."}),
    "search_kb": ToolSpec(
        "Search the knowledge base of the open task's domain (its metric catalog and business-rule documents) "
        "with BM25; returns the best matching passages, each headed by its document's path.",
        {"query": "Words to look for, e.g. a metric name or a rule topic.",
         "k": f"How many passages to return (1 to {MAX_K}; default {DEFAULT_K})."}),
    "get_kb_document": ToolSpec(
        "Read one knowledge-base document whole, by its path as search_kb shows it (e.g. metrics.md or "
        "rules/<name>.md); an unknown path lists the documents there are.",
        {"path": "The document's path under the knowledge base, e.g. metrics.md."}),
}
FLOW: dict[str, ToolSpec] = {
    NEXT: ToolSpec(
        "Get the next task of the benchmark: its task_id, attempt, attempt_id, question and answer format (JSON). "
        "Answer it with the other tools, then call submit_answer with its task_id and attempt_id. While your task "
        "is open, next_task hands out that task again. When every task is answered it says so (done: true)."),
    SUBMIT: ToolSpec(
        "Submit the answer to your open task, with the attempt_id next_task gave. The answer is recorded once, "
        "not judged: no reply says whether it is right. Then call next_task.",
        {"task_id": "The task_id next_task gave.",
         "attempt_id": "The attempt_id next_task gave with the task (ties the answer to your attempt when several "
                       "agents share the server).",
         "answer": "The answer in exactly the format the task asks for: JSON (an object or a list, or JSON text "
                   "such as {\"value\": 12.5}), or for a knowledge question a sentence or two."}),
}


@dataclass(frozen=True)
class Limits:
    """The sandbox's limits on an agent's SQL, as `dptool eval` sets them."""

    sql_timeout: float = DEFAULT_TIMEOUT
    sql_memory_mb: int = DEFAULT_MEMORY_MB
    max_rows: int = DEFAULT_MAX_ROWS


@dataclass(frozen=True)
class Reply:
    """A tool's reply as the agent reads it; `error` when it is one line starting with "error:"."""

    text: str
    error: bool = False


def failed(message: str) -> Reply:
    return Reply(message if message.startswith("error:") else f"error: {message}", True)


def load_environment_prompts(version: str = PROMPT_VERSION) -> dict:
    """dptool/llm/prompts/environment_<version>.toml, with the answer formats and conditions of agent_<version>."""
    import tomllib

    path = PROMPTS / f"environment_{version}.toml"
    if not path.is_file():
        raise DptoolError(f"{path}: prompt version {version!r} not found")
    own = tomllib.loads(path.read_text(encoding="utf-8"))
    agent = load_prompts(version)
    return {**own, "formats": agent["formats"], "conditions": agent["conditions"]}


# ---------------------------------------------------------------------------------------------------
# what the environment knows: tables, metric catalog, kb documents (read once, task-free)


@dataclass(frozen=True)
class Table:
    name: str  # schema.table, as SQL names it
    columns: tuple[tuple[str, str], ...]  # (column, type)
    rows: int


def read_tables(warehouse: Path) -> dict[str, Table]:
    """The warehouse's tables with their columns and row counts, read once on a read-only connection."""
    from sqlglot import exp

    from dptool.project.warehouse import Warehouse

    if not warehouse.is_file():
        raise DptoolError(f"{warehouse}: warehouse not found; expected a bundle written by `dptool generate`")
    with Warehouse(warehouse) as wh:
        _, rows = wh.query("select table_schema, table_name, column_name, data_type from information_schema.columns "
                           "where table_schema not in ('information_schema', 'pg_catalog') "
                           "order by table_schema, table_name, ordinal_position")
        columns: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for schema, table, column, dtype in rows:
            columns.setdefault((schema, table), []).append((column, dtype))
        tables = {}
        for (schema, table), cols in columns.items():
            count = exp.select(exp.Count(this=exp.Star())).from_(exp.table_(table, db=schema, quoted=True))
            (n,), = wh.query(count.sql("duckdb"))[1]
            tables[f"{schema}.{table}"] = Table(f"{schema}.{table}", tuple(cols), int(n))
    return tables


def schema_of(tables: dict[str, Table]) -> str:
    """The tables, one line each: schema.table(column TYPE, ...)."""
    return "\n".join(f"- {t.name}({', '.join(f'{c} {d}' for c, d in t.columns)})" for t in tables.values())


@dataclass(frozen=True)
class Metric:
    name: str
    facts: dict[str, str]  # the catalog's "- Key: value" lines
    entry: str  # the whole entry, as markdown
    source: str


def read_metrics(kb: Path) -> list[Metric]:
    """The metric catalog: every `## Name` entry (with a `- Formula:` line) of every metrics.md under kb/, in file
    order."""
    out = []
    for path in sorted(kb.rglob("metrics.md")):
        source = path.relative_to(kb).as_posix()
        for block in re.split(r"^## ", path.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]:
            name, _, body = block.partition("\n")
            facts = dict(m.groups() for m in re.finditer(r"^- ([A-Z][\w ]*): (.*)$", body, flags=re.MULTILINE))
            if "Formula" in facts:  # a metric's entry; the Conventions section is none
                out.append(Metric(name.strip(), facts, f"## {block.strip()}", source))
    return out


@dataclass(frozen=True)
class Shelf:
    """One knowledge base the kb tools read: its passages (searched), its documents by path, its metric catalog."""

    kb: KnowledgeBase
    documents: dict[str, Path]
    metrics: list[Metric]

    @classmethod
    def read(cls, folder: Path) -> Shelf:
        return cls(KnowledgeBase(folder), {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*.md"))},
                   read_metrics(folder))


@dataclass(frozen=True)
class Knowledge:
    """What the tools know of a bundle besides its SQL: the tables, and the kb of each domain (kb/<domain>/: searched,
    by document, its catalog); `shelves[None]` is all of kb/, read while no task is open (paths then start with the
    domain). A bundle whose kb/ is one folder for every domain has only `shelves[None]`."""

    tables: dict[str, Table]
    shelves: dict[str | None, Shelf]

    @classmethod
    def read(cls, bundle: Path) -> Knowledge:
        kb = bundle / "kb"
        tables = read_tables(bundle / "warehouse.duckdb")  # first: a bundle without a warehouse is said so
        shelves = {None: Shelf.read(kb)}
        shelves.update({d: Shelf.read(f) for d, f in domain_folders(kb).items() if d is not None})
        return cls(tables, shelves)

    def shelf(self, domain: str | None) -> Shelf | None:
        """The kb a task of `domain` reads (None: no task open); None when the bundle has none for that domain."""
        if domain is None or len(self.shelves) == 1:
            return self.shelves[None]
        return self.shelves.get(domain)


class KnowledgeSource:
    """A bundle's `Knowledge`, read once, at the first call that needs it, for every environment given this source."""

    def __init__(self, bundle: Path, knowledge: Knowledge | None = None):
        self.bundle = bundle
        self._knowledge = knowledge
        self._lock = threading.Lock()

    def get(self) -> Knowledge:
        with self._lock:
            if self._knowledge is None:
                self._knowledge = Knowledge.read(self.bundle)
            return self._knowledge


class Environment:
    """The tools of one bundle: its warehouse in a sandbox, its kb, its metric catalog.

    `call(tool, arguments)` gives the reply an agent reads and never raises; `new_session()` starts a fresh SQL
    session (a task's queries leave nothing for the next). Calls are serialized: the sandbox runs one query at a time.
    """

    def __init__(self, bundle: str | Path, limits: Limits = Limits(),
                 knowledge: Knowledge | KnowledgeSource | None = None, domain: str | None = None):
        """`knowledge`: the bundle's, read once for several environments (one per inspect sample), or the `source`
        of another environment (read at the first call of either that needs it); else read at the first call here
        that needs it. `domain`: the domain whose kb the kb tools read (see `set_domain`)."""
        self.bundle = Path(bundle)
        self.limits = limits
        # read at the first call that needs it: a server answers `initialize` and hands out tasks first
        self.source = knowledge if isinstance(knowledge, KnowledgeSource) else KnowledgeSource(self.bundle, knowledge)
        self.domain = domain
        self._lock = threading.Lock()
        self.sandbox = Sandbox(self.bundle / "warehouse.duckdb", timeout=limits.sql_timeout,
                               max_rows=limits.max_rows, memory_mb=limits.sql_memory_mb, wait=False)

    @property
    def knowledge(self) -> Knowledge:
        return self.source.get()

    @property
    def tables(self) -> dict[str, Table]:
        return self.knowledge.tables

    def close(self) -> None:
        self.sandbox.close()

    def __enter__(self) -> Environment:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def new_session(self) -> None:
        with self._lock:
            self.sandbox.new_session()

    def set_domain(self, domain: str | None) -> None:
        """Read the kb of `domain` (kb/<domain>/) from now on: the open task's, so that a search never returns
        another domain's policy; None (no task open) reads all of kb/."""
        with self._lock:
            self.domain = domain

    @property
    def shelf(self) -> Shelf:
        shelf = self.knowledge.shelf(self.domain)
        if shelf is None:
            raise DptoolError(f"the bundle's kb/ has no folder for the domain {self.domain!r}")
        return shelf

    def schema(self) -> str:
        """The tables, one line each: schema.table(column TYPE, ...) (what get_all_models replies)."""
        return schema_of(self.tables)

    def call(self, tool: str, arguments: dict[str, Any] | None) -> Reply:
        """The reply of one tool call; an unknown tool or a wrong argument is an error reply, as is any failure."""
        arguments = arguments if arguments is not None else {}
        if not isinstance(arguments, dict):
            return failed(f"the arguments of {tool} must be a JSON object")
        method = getattr(self, f"_{tool}", None) if tool in TOOLS else None
        if method is None:
            return failed(f"unknown tool {tool!r}; the tools are {', '.join(TOOLS)}")
        try:
            with self._lock:
                return method(**_arguments(tool, arguments))
        except _BadArgument as exc:
            return failed(str(exc))
        except DptoolError as exc:  # the warehouse cannot be opened at all: the agent is told, the server stays up
            return failed(str(exc))
        except Exception as exc:  # noqa: BLE001 - a tool's failure is the agent's to read, never a crash
            return failed(f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")

    # the tools; each returns a Reply

    def _execute_sql(self, sql: str) -> Reply:
        text = self.sandbox.run(sql)
        if text.startswith("error:"):  # the sandbox speaks of its own tool name, run_sql
            return Reply(text.replace("run_sql", "execute_sql"), True)
        return Reply(text)

    def _get_all_models(self) -> Reply:
        return Reply(self.schema())

    def _get_model_details(self, name: str) -> Reply:
        table = self._table(name)
        if table is None:
            return failed(f"no table {name!r}; the tables are {', '.join(self.tables)}")
        lines = [f"{table.name}: {table.rows:,} rows, {len(table.columns)} columns", "column | type"]
        lines += [f"{c} | {d}" for c, d in table.columns]
        return Reply("\n".join(lines))

    def _table(self, name: str) -> Table | None:
        wanted = ".".join(p.strip().strip('"`').casefold() for p in name.strip().split("."))
        by_name = {k.casefold(): t for k, t in self.tables.items()}
        if wanted in by_name:
            return by_name[wanted]
        alone = [t for k, t in by_name.items() if k.split(".", 1)[-1] == wanted]
        return alone[0] if len(alone) == 1 else None

    def _list_metrics(self, search: str | list[str] | None = None) -> Reply:
        metrics = self.shelf.metrics
        if not metrics:
            return failed("the knowledge base has no metric catalog (metrics.md)")
        if search is None or search == [] or search == "":
            lines = ["name | domain | unit | formula"]
            lines += [" | ".join((m.name, m.facts.get("Domain", ""), m.facts.get("Unit", ""),
                                  m.facts.get("Formula", ""))) for m in metrics]
            return Reply("\n".join(lines) + f"\n({len(metrics)} metrics; list_metrics(search=...) gives an "
                                            "entry in full)")
        words = [search] if isinstance(search, str) else search
        words = [w.casefold().strip() for w in words if w.strip()]
        found = [m for m in metrics if any(w in m.name.casefold() for w in words)]
        if not found:
            return Reply("no metric name contains " + " or ".join(repr(w) for w in words)
                         + "; list_metrics() lists them all")
        return Reply("\n\n".join(m.entry for m in found))

    def _search_kb(self, query: str, k: int = DEFAULT_K) -> Reply:
        if not 1 <= k <= MAX_K:
            return failed(f"search_kb: k must be between 1 and {MAX_K}")
        if len(query) > MAX_QUERY_CHARS:
            return failed(f"search_kb: the query is {len(query):,} characters, at most {MAX_QUERY_CHARS:,}; "
                          "search for a few words")
        text = self.shelf.kb.run(query, k)
        return Reply(text, text.startswith("error:"))

    def _get_kb_document(self, path: str) -> Reply:
        # looked up among the documents listed at start, never resolved on disk: no path leaves kb/
        documents = self.shelf.documents
        key = path.strip().lstrip("/")
        key = key[3:] if key.startswith("kb/") else key
        if self.domain is not None and key.startswith(f"{self.domain}/") and key not in documents:
            key = key[len(self.domain) + 1:]  # the path under kb/ of a document of the task's own domain
        if key not in documents:
            return failed(f"no kb document {path!r}; the documents are {', '.join(documents)}")
        return Reply(documents[key].read_text(encoding="utf-8"))


class _BadArgument(Exception):
    pass


# each tool's arguments: name -> (types accepted, required)
_SIGNATURES: dict[str, dict[str, tuple[tuple[type, ...], bool]]] = {
    "execute_sql": {"sql": ((str,), True)},
    "get_all_models": {},
    "get_model_details": {"name": ((str,), True)},
    "list_metrics": {"search": ((str, list, type(None)), False)},
    "search_kb": {"query": ((str,), True), "k": ((int,), False)},
    "get_kb_document": {"path": ((str,), True)},
}
_TYPE_NAMES = {str: "a string", list: "a list of strings", int: "an integer", type(None): "null"}


def _arguments(tool: str, given: dict[str, Any]) -> dict[str, Any]:
    """The arguments a tool takes, checked; other keys are ignored, as MCP servers do."""
    out = {}
    for name, (types, required) in _SIGNATURES[tool].items():
        if name not in given:
            if required:
                raise _BadArgument(f"{tool} needs the argument {name!r}")
            continue
        value = given[name]
        if isinstance(value, bool) or not isinstance(value, types) or (
                isinstance(value, list) and not all(isinstance(v, str) for v in value)):
            raise _BadArgument(f"{tool}: {name!r} must be " + " or ".join(_TYPE_NAMES[t] for t in types))
        out[name] = value
    return out
