"""DP-Bench §5: the metrics of a predicted data product against the gold one.

- Reading the SQL, not the claims: every derived column's provenance SQL is qualified against the
  database's schema, and the columns it reads are its source columns (a file's `source_columns` are not
  trusted). A predicted derived column whose SQL does not parse, names a table or column the database does
  not have, or reads no table of it scores 0 and reads nothing; the reason is kept and the run goes on. A
  derived column whose SQL only copies or renames one column of a table is that table's non-derived column,
  and the keys its joins read are non-derived columns too (DP-Bench's definition, and the gold's: see
  dptool.dp.reads and dptool.dp.products).
- Column-level (§5.1): precision, recall and F1 of the set of (table, column) pairs, per data product, then
  macro-averaged (each of P, R and F1 averaged over data products). Two settings: non-derived columns only,
  and with provenance columns (every column a derived column's provenance reads joins the set).
- Derived-column similarity (§5.2): every predicted derived column against every gold one,
  sim(x, y) = 1 - diff(x, y) / totaldiff(x, y) over the normalized ASTs of their provenance SQL, where
  diff counts sqlglot diff's changes (insert, remove, move, update) and totaldiff all its steps (keeps too);
  the unique pairing with the greatest total similarity (scipy's linear_sum_assignment) gives the soft true
  positives: soft P = sum / |predicted|, soft R = sum / |gold|, soft F1 their harmonic mean; macro-averaged.
- Execution accuracy, oracle (§5.3, Table 6): a question counts as answered when the predicted data product
  holds every column its gold SQL reads (its columns with provenance); accuracy over all questions.
- The Hard subset (§4.5): data products over databases with at least 50 columns.

A data product present in GOLD and missing from PRED is scored as an empty prediction (P = R = F1 = 0).
A data product whose gold side of a metric is empty (e.g. no derived columns) is left out of that metric's
average: recall is undefined there; every summary says over how many data products it averages.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import asdict, dataclass, field
from typing import NamedTuple

import numpy as np
from scipy.optimize import linear_sum_assignment
from sqlglot import exp
from sqlglot.diff import Keep, diff
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize import normalize
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.optimizer.qualify import qualify

from dptool.dp import dpjson
from dptool.dp.lineage import parse
from dptool.dp.reads import columns_read, copied_column, qualified, question_columns, tables_read
from dptool.errors import DptoolError

HARD_MIN_COLUMNS = 50
# Operands whose order does not change the value: sorted, so `a = b` and `b = a` get one AST.
_COMMUTATIVE = (exp.Add, exp.Mul, exp.EQ, exp.NEQ, exp.And, exp.Or)


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float


def prf(true_positives: float, n_predicted: int, n_gold: int) -> PRF | None:
    """P, R and F1 from (soft) true positives; None when the gold side is empty (nothing to find)."""
    if n_gold == 0:
        return None
    precision = true_positives / n_predicted if n_predicted else 0.0
    recall = true_positives / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return PRF(precision, recall, f1)


def set_prf(predicted: set, gold: set) -> PRF | None:
    return prf(len(predicted & gold), len(predicted), len(gold))


def normalized_ast(sql: str, dialect: str, schema: dict | None = None) -> exp.Expression:
    """The provenance SQL as an AST in the canonical form DP-Bench compares.

    Columns are qualified (with the database's schema when given), then aliases are eliminated (table
    aliases give way to table names; projection aliases are dropped), predicates are put in disjunctive
    normal form, and operands of commutative operators are sorted.
    """
    tree = parse(sql, dialect)
    for node in tree.walk():
        node.comments = None
    tree = normalize_identifiers(tree, dialect=dialect)
    with contextlib.suppress(SqlglotError):  # unqualifiable (e.g. unknown tables): compare it as written
        tree = qualify(tree, dialect=dialect, schema=schema, validate_qualify_columns=False, identify=False,
                       quote_identifiers=False)
    tree = _eliminate_aliases(tree)
    tree = normalize(tree, dnf=True)
    return _sort_commutative(tree)


def _eliminate_aliases(tree: exp.Expression) -> exp.Expression:
    for select in tree.find_all(exp.Select):
        renames = {}
        for table in select.find_all(exp.Table):
            if table.alias and table.find_ancestor(exp.Select) is select:
                renames[table.alias] = table.name
                table.set("alias", None)
        for column in select.find_all(exp.Column):
            if column.table in renames:
                column.set("table", exp.to_identifier(renames[column.table]))
    for alias in list(tree.find_all(exp.Alias)):
        alias.replace(alias.this)
    return tree


def _sort_commutative(node: exp.Expression) -> exp.Expression:
    """Bottom-up, so each operand is already in canonical form when its parent sorts by text."""
    for key, value in list(node.args.items()):
        if isinstance(value, exp.Expression):
            node.set(key, _sort_commutative(value))
        elif isinstance(value, list):
            node.set(key, [_sort_commutative(v) if isinstance(v, exp.Expression) else v for v in value])
    if isinstance(node, exp.And | exp.Or):
        operands = sorted(node.flatten(), key=lambda e: e.sql())
        result = operands[0]
        for operand in operands[1:]:
            result = type(node)(this=result, expression=operand)
        return result
    if isinstance(node, _COMMUTATIVE) and node.expression is not None:
        left, right = sorted((node.this, node.expression), key=lambda e: e.sql())
        return type(node)(this=left, expression=right)
    return node


def similarity(x: exp.Expression, y: exp.Expression) -> float:
    """1 - diff/totaldiff: the share of sqlglot diff's steps that keep a node as it is."""
    if x == y:
        return 1.0  # diff would keep every node: skip computing it
    edits = diff(x, y)
    changes = sum(1 for e in edits if not isinstance(e, Keep))
    return 1.0 - changes / len(edits) if edits else 1.0


def derived_pairing(predicted: list[exp.Expression | None],
                    gold: list[exp.Expression]) -> tuple[float, list[tuple]]:
    """The unique pairing of predicted and gold derived columns with the greatest total similarity.

    A predicted column without an AST (unreadable SQL) is like nothing: similarity 0 with every gold one.
    Returns the total and the pairs (predicted index, gold index, similarity), predicted order.
    """
    if not predicted or not gold:
        return 0.0, []
    matrix = np.array([[similarity(p, g) if p is not None else 0.0 for g in gold] for p in predicted])
    rows, cols = linear_sum_assignment(matrix, maximize=True)
    pairs = [(int(r), int(c), float(matrix[r, c])) for r, c in zip(rows, cols, strict=True)]
    return float(sum(s for _, _, s in pairs)), pairs


class ReadColumn(NamedTuple):
    """A derived column as the scorer reads it from its SQL."""

    name: str
    ast: exp.Expression | None  # None: it scores 0
    sources: frozenset[dpjson.ColumnRef]  # what its SQL reads
    copy: dpjson.ColumnRef | None  # the one column of a table it only copies: a non-derived column
    keys: frozenset[dpjson.ColumnRef] = frozenset()  # a copy's join keys: non-derived columns too
    problem: str = ""  # why it scores 0


@functools.lru_cache(maxsize=4096)  # a bench scores every method against one gold: read each column once
def read_derived(column: dpjson.DerivedColumn, db: dpjson.Database, dialect: str, *,
                 trusted: bool = False) -> ReadColumn:
    """Read one derived column from its provenance SQL.

    A prediction (`trusted` False) whose SQL cannot run on the database, or reads no table of it, scores 0.
    The gold (`trusted`) is compared as written when it names what the database lacks, with the source
    columns its file lists; gold SQL that does not parse is an error.
    """
    schema = db.schema()
    try:
        tree = qualified(column.provenance, db, dialect, strict=True)
    except DptoolError as exc:
        if not trusted:
            return ReadColumn(column.name, None, frozenset(), None, problem=str(exc))
        return ReadColumn(column.name, normalized_ast(column.provenance, dialect, schema),
                          frozenset(column.source_columns), None)
    if not tables_read(tree, db):
        if not trusted:
            return ReadColumn(column.name, None, frozenset(), None, problem=f"reads no table of database {db.id!r}")
        return ReadColumn(column.name, normalized_ast(column.provenance, dialect, schema), frozenset(), None)
    copy, keys = copied_column(tree, db, dialect) or (None, set())
    return ReadColumn(column.name, normalized_ast(column.provenance, dialect, schema), frozenset(columns_read(tree)),
                      copy, frozenset(keys))


@dataclass
class DPScore:
    dp_id: str
    db_id: str
    hard: bool
    non_derived: PRF | None
    with_provenance: PRF | None
    derived: PRF | None
    questions: int
    answerable: int
    pairs: list[tuple[str, str, float]] = field(default_factory=list)  # (predicted, gold, similarity)
    missing: list[str] = field(default_factory=list)  # per unanswerable question, the columns it lacks
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (predicted derived column, why it scores 0)
    copies: list[tuple[str, str]] = field(default_factory=list)  # (predicted "derived" column, table.column)


@dataclass
class Report:
    scores: list[DPScore]
    unmatched: list[str]  # predicted data products with no gold
    db_columns: dict[str, int] = field(default_factory=dict)  # the gold data products' databases: columns
    hard_min_columns: int = HARD_MIN_COLUMNS

    def empty_hard(self) -> str:
        """Why the Hard subset is empty, in one line."""
        sizes = ", ".join(f"{db} {n}" for db, n in sorted(self.db_columns.items()))
        return (f"Hard subset: empty (no data product is built over a database of ≥ {self.hard_min_columns} "
                f"columns; columns per database: {sizes or 'none'})")

    def summary(self, hard_only: bool = False) -> dict:
        """Macro averages (and the number of data products each is over) for the whole set or Hard."""
        chosen = [s for s in self.scores if s.hard or not hard_only]
        result: dict = {"data_products": len(chosen)}
        for name in ("non_derived", "with_provenance", "derived"):
            values = [getattr(s, name) for s in chosen if getattr(s, name) is not None]
            result[name] = {"n": len(values), **({k: sum(getattr(v, k) for v in values) / len(values)
                                                   for k in ("precision", "recall", "f1")} if values else {})}
        questions = sum(s.questions for s in chosen)
        answered = sum(s.answerable for s in chosen)
        result["execution_accuracy_oracle"] = {"questions": questions, "answerable": answered,
                                               "accuracy": answered / questions if questions else None}
        return result

    def to_dict(self) -> dict:
        return {"all": self.summary(), "hard": self.summary(hard_only=True), "unmatched_predictions": self.unmatched,
                "hard_min_columns": self.hard_min_columns, "database_columns": self.db_columns,
                "data_products": [asdict(s) for s in self.scores]}


def score(pred: dpjson.Document, gold: dpjson.Document, hard_min_columns: int = HARD_MIN_COLUMNS,
          gold_id: str | None = None) -> Report:
    """Score every gold data product against the predicted one with the same id; with `gold_id`, only that gold
    data product, against the prediction's one data product (or the one of that id), whatever its id."""
    if gold_id is not None:
        return _score_against(pred, gold, hard_min_columns, gold_id)
    by_id = {dp.id: dp for dp in pred.data_products}
    scores = []
    for g in sorted(gold.data_products, key=lambda d: d.id):
        p = by_id.get(g.id) or dpjson.DataProduct(g.id, g.db_id, "", ())
        scores.append(_score_one(p, pred.dialect, g, gold.dialect, _database(gold, g), hard_min_columns))
    unmatched = sorted(set(by_id) - {g.id for g in gold.data_products})
    sizes = {g.db_id: gold.databases[g.db_id].n_columns for g in gold.data_products}
    return Report(scores, unmatched, sizes, hard_min_columns)


def _score_against(pred: dpjson.Document, gold: dpjson.Document, hard_min_columns: int, gold_id: str) -> Report:
    g = next((d for d in gold.data_products if d.id == gold_id), None)
    if g is None:
        raise DptoolError(f"--gold-id {gold_id!r}: the gold file has no such data product (its data products: "
                          f"{', '.join(sorted(d.id for d in gold.data_products)) or 'none'})")
    if len(pred.data_products) == 1:
        p = pred.data_products[0]
    else:
        p = next((d for d in pred.data_products if d.id == gold_id), None)
        if p is None:
            raise DptoolError(f"--gold-id {gold_id!r}: the prediction holds {len(pred.data_products)} data products "
                              f"({', '.join(sorted(d.id for d in pred.data_products)) or 'none'}) and none of that "
                              "id; --gold-id scores one prediction")
    db = _database(gold, g)
    unmatched = sorted(d.id for d in pred.data_products if d is not p)
    return Report([_score_one(p, pred.dialect, g, gold.dialect, db, hard_min_columns)], unmatched,
                  {g.db_id: db.n_columns}, hard_min_columns)


def _database(gold: dpjson.Document, g: dpjson.DataProduct) -> dpjson.Database:
    db = gold.databases.get(g.db_id)
    if db is None:
        raise DptoolError(f"gold data product {g.id!r}: the file has no database {g.db_id!r} "
                          "(needed for the Hard subset and the questions' columns)")
    return db


def _score_one(p: dpjson.DataProduct, p_dialect: str, g: dpjson.DataProduct, g_dialect: str,
               db: dpjson.Database, hard_min_columns: int) -> DPScore:
    p_read = [read_derived(d, db, p_dialect) for d in p.derived_columns()]
    g_read = [_gold_derived(d, db, g_dialect, g.id) for d in g.derived_columns()]
    p_derived, g_derived = [r for r in p_read if r.copy is None], [r for r in g_read if r.copy is None]
    p_columns = p.columns().union(*({r.copy, *r.keys} for r in p_read if r.copy))
    g_columns = g.columns().union(*({r.copy, *r.keys} for r in g_read if r.copy))
    have = p_columns.union(*(r.sources for r in p_derived))
    total, pairs = derived_pairing([r.ast for r in p_derived], [r.ast for r in g_derived])
    answerable, missing = 0, []
    for q in g.questions:
        lacking = question_columns(q.sql, db, g_dialect) - have
        if lacking:
            missing.append(", ".join(f"{t}.{c}" for t, c in sorted(lacking)))
        else:
            answerable += 1
    return DPScore(
        dp_id=g.id, db_id=g.db_id, hard=db.n_columns >= hard_min_columns,
        non_derived=set_prf(p_columns, g_columns),
        with_provenance=set_prf(have, g_columns.union(*(r.sources for r in g_derived))),
        derived=prf(total, len(p_derived), len(g_derived)),
        questions=len(g.questions), answerable=answerable,
        pairs=[(p_derived[i].name, g_derived[j].name, s) for i, j, s in pairs], missing=missing,
        rejected=[(r.name, r.problem) for r in p_read if r.problem],
        copies=[(r.name, f"{r.copy[0]}.{r.copy[1]}") for r in p_read if r.copy])


def _gold_derived(column: dpjson.DerivedColumn, db: dpjson.Database, dialect: str, dp_id: str) -> ReadColumn:
    try:
        return read_derived(column, db, dialect, trusted=True)
    except DptoolError as exc:
        raise DptoolError(f"gold data product {dp_id!r}, derived column {column.name!r}: {exc}") from None
