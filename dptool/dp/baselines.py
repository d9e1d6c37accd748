"""DP-Bench §6 baselines: no search, hybrid search, and the LLM.

- No search: the whole database is the data product (perfect recall; DP-Bench Table 2's first row).
- Hybrid search (§6.1): one "sentence" per column (table name, column name, description), a BM25 sparse
  vector (rank-bm25's idf and term saturation) and, when an embedding model is configured, a dense one
  (`LLM.embed`); relevance = 0.8 · dense cosine + 0.2 · sparse cosine, or the sparse cosine alone. Columns at
  or over the threshold form the data product; then, for every foreign key between two chosen tables, both
  key columns join it. Search yields no derived columns.
- LLM (§6.2): the whole schema as JSON and the request (prompt dptool/llm/prompts/dp_create_v1.toml); the
  model reasons, picks columns and writes derived columns with SQL. A reply that is not JSON, or JSON
  without the expected lists, is asked for again; tables, columns and derived columns that are not in the
  database (hallucinated) are dropped and reported.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

from rank_bm25 import BM25Okapi

from dptool.dp import dpjson
from dptool.dp.lineage import parse
from dptool.dp.reads import columns_read, qualified
from dptool.errors import DptoolError
from dptool.llm.client import LLM, LLMError, load_prompt

DENSE_WEIGHT = 0.8
SPARSE_WEIGHT = 0.2
HYBRID_THRESHOLD = 0.75  # DP-Bench §6.1
# Sparse cosines run lower than dense ones (a request shares few words with any one column), so BM25 alone
# needs its own cut: a column must share about a fifth of the request's idf-weighted vocabulary.
BM25_THRESHOLD = 0.2
PROMPT = "dp_create"
LLM_ATTEMPTS = 3


def no_search(db: dpjson.Database, dp_id: str, request: str) -> dpjson.DataProduct:
    """Every column of every table of the database."""
    tables = tuple(dpjson.DPTable(t.name, tuple(c.name for c in t.columns)) for t in db.tables)
    return dpjson.DataProduct(dp_id, db.id, request, tables)


def tokens(text: str) -> list[str]:
    """Lower-case words; identifiers split at underscores (order_status -> order, status)."""
    return re.findall(r"[a-z0-9]+", text.lower())


def column_sentences(db: dpjson.Database) -> list[tuple[str, str, str]]:
    """(table, column, sentence) for every column: the text the search indexes."""
    return [(t.name, c.name, f"{t.name} {c.name} {c.description}".strip()) for t in db.tables for c in t.columns]


class HybridSearch:
    """Column search over one database, BM25 with or without dense embeddings."""

    def __init__(self, db: dpjson.Database, embedder: LLM | None = None, threshold: float | None = None):
        self.db = db
        self.embedder = embedder
        self.threshold = threshold if threshold is not None else (HYBRID_THRESHOLD if embedder else BM25_THRESHOLD)
        self.entries = column_sentences(db)
        corpus = [tokens(sentence) for _, _, sentence in self.entries]
        self.bm25 = BM25Okapi(corpus)
        self._doc_vectors = [self._doc_vector(i) for i in range(len(corpus))]
        self._dense: list[list[float]] | None = None

    @property
    def label(self) -> str:
        if self.embedder:
            return f"Hybrid search (dense {self.embedder.model} {DENSE_WEIGHT:g} + BM25 {SPARSE_WEIGHT:g})"
        return "Hybrid search (BM25 only)"

    def _doc_vector(self, i: int) -> dict[str, float]:
        bm, length = self.bm25, self.bm25.doc_len[i]
        norm = bm.k1 * (1 - bm.b + bm.b * length / bm.avgdl)
        return {t: bm.idf[t] * f * (bm.k1 + 1) / (f + norm) for t, f in bm.doc_freqs[i].items()}

    def sparse_scores(self, request: str) -> list[float]:
        """Cosine of the request's idf vector with each column's BM25 vector."""
        query = {t: self.bm25.idf[t] for t in set(tokens(request)) if t in self.bm25.idf}
        q_norm = math.sqrt(sum(w * w for w in query.values()))
        scores = []
        for vector in self._doc_vectors:
            d_norm = math.sqrt(sum(w * w for w in vector.values()))
            dot = sum(w * vector.get(t, 0.0) for t, w in query.items())
            scores.append(dot / (q_norm * d_norm) if q_norm and d_norm else 0.0)
        return scores

    def dense_scores(self, request: str) -> list[float]:
        if self.embedder is None:
            raise DptoolError("no embedding model configured")
        if self._dense is None:
            self._dense = self.embedder.embed([s for _, _, s in self.entries], stage="dp_search")
        query = self.embedder.embed([request], stage="dp_search")[0]
        return [_cosine(query, v) for v in self._dense]

    def scores(self, request: str) -> list[float]:
        """Relevance of every column to the request, in `entries` order."""
        sparse = self.sparse_scores(request)
        if self.embedder is None:
            return sparse
        dense = self.dense_scores(request)
        return [DENSE_WEIGHT * d + SPARSE_WEIGHT * s for d, s in zip(dense, sparse, strict=True)]

    def create(self, dp_id: str, request: str) -> dpjson.DataProduct:
        """The columns at or over the threshold, plus the keys of foreign keys between chosen tables."""
        chosen = {(t, c) for (t, c, _), s in zip(self.entries, self.scores(request), strict=True)
                  if s >= self.threshold}
        tables = {t for t, _ in chosen}
        for fk in self.db.foreign_keys:
            if fk.table in tables and fk.ref_table in tables:
                chosen |= {(fk.table, fk.column), (fk.ref_table, fk.ref_column)}
        return _product(self.db, dp_id, request, chosen, ())


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def _product(db: dpjson.Database, dp_id: str, request: str, chosen: set[tuple[str, str]],
             derived: tuple[tuple[str, dpjson.DerivedColumn], ...]) -> dpjson.DataProduct:
    """A data product over the database's tables, columns in the database's order."""
    tables = []
    for table in db.tables:
        columns = tuple(c.name for c in table.columns if (table.name, c.name) in chosen)
        mine = tuple(d for home, d in derived if home == table.name)
        if columns or mine:
            tables.append(dpjson.DPTable(table.name, columns, mine))
    return dpjson.DataProduct(dp_id, db.id, request, tuple(tables))


@dataclass
class LLMResult:
    product: dpjson.DataProduct
    dropped: list[str] = field(default_factory=list)  # what the model named that the database lacks
    attempts: int = 1
    prompt: str = ""  # the prompt file's name and version, e.g. dp_create_v1


def schema_json(db: dpjson.Database) -> str:
    """The database schema as the LLM sees it: tables, typed and described columns, foreign keys."""
    return json.dumps({
        "database": db.id,
        "tables": [{"table_name": t.name, "description": t.description,
                    "columns": [{"column_name": c.name, "type": c.type, "description": c.description}
                                for c in t.columns]} for t in db.tables],
        "foreign_keys": [f"{fk.table}.{fk.column} -> {fk.ref_table}.{fk.ref_column}" for fk in db.foreign_keys],
    }, indent=1)


def llm_create(llm: LLM, db: dpjson.Database, dp_id: str, request: str, dialect: str) -> LLMResult:
    """The LLM baseline for one request over one database."""
    prompt = load_prompt(PROMPT)
    messages = [{"role": "system", "content": prompt.render("system", dialect=dialect)},
                {"role": "user", "content": prompt.render("user", schema=schema_json(db), request=request)}]
    problem = ""
    for attempt in range(1, LLM_ATTEMPTS + 1):
        reply = llm.chat_json(messages, stage="dp_create")
        problem = _shape_problem(reply)
        if not problem:
            product, dropped = _filter(reply, db, dp_id, request, dialect)
            return LLMResult(product, dropped, attempt, prompt.label)
        # Cached replies are keyed by the messages: a retry must say something new to get a new answer.
        messages = [*messages, {"role": "assistant", "content": json.dumps(reply)},
                    {"role": "user", "content": f"That JSON is incomplete: {problem}. Reply again with the whole "
                                                "JSON object in the format asked for."}]
    raise LLMError(f"{llm.name}: no usable data product after {LLM_ATTEMPTS} replies ({problem})")


def _shape_problem(reply: dict) -> str:
    tables = reply.get("tables")
    if not isinstance(tables, list):
        return "`tables` is missing or not a list"
    for t in tables:
        if not (isinstance(t, dict) and isinstance(t.get("table_name"), str) and isinstance(t.get("columns"), list)):
            return "each table needs `table_name` and a list of `columns`"
    derived = reply.get("derived_columns", [])
    if not isinstance(derived, list) or any(not isinstance(d, dict) for d in derived):
        return "`derived_columns` must be a list of objects"
    return ""


def _filter(reply: dict, db: dpjson.Database, dp_id: str, request: str,
            dialect: str) -> tuple[dpjson.DataProduct, list[str]]:
    dropped: list[str] = []
    chosen: set[tuple[str, str]] = set()
    for t in reply["tables"]:
        table = db.table(t["table_name"])
        if table is None:
            dropped.append(f"table {t['table_name']}")
            continue
        names = {c.name.lower(): c.name for c in table.columns}
        for column in t["columns"]:
            if isinstance(column, str) and column.lower() in names:
                chosen.add((table.name, names[column.lower()]))
            else:
                dropped.append(f"column {table.name}.{column}")
    derived: list[tuple[str, dpjson.DerivedColumn]] = []
    seen: set[str] = set()
    for d in reply.get("derived_columns", []):
        name, sql = d.get("column_name"), d.get("sql")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or name in seen:
            dropped.append(f"derived column {name!r} (not a unique column name)")
            continue
        if not isinstance(sql, str) or not sql.strip():
            dropped.append(f"derived column {name} (no SQL)")
            continue
        try:
            tree = qualified(sql, db, dialect, strict=True)
        except DptoolError as exc:
            dropped.append(f"derived column {name} ({exc})")
            continue
        seen.add(name)
        sources = tuple(sorted(columns_read(tree)))
        home = db.table(str(d.get("table_name") or ""))
        home_name = home.name if home else (sources[0][0] if sources else db.tables[0].name)
        provenance = parse(sql, dialect).sql(dialect, pretty=True)
        derived.append((home_name, dpjson.DerivedColumn(name, provenance, sources, str(d.get("description") or ""))))
    return _product(db, dp_id, request, chosen, tuple(derived)), dropped
