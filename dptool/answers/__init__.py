"""Answers: a typed comparison of one answer with its task's gold (DESIGN §4), shared by the scorer and generate.

`dptool.evaluate.score` scores a run with it; `dptool.generate.validate` uses it to reject a rule task whose
base answer would already pass.

verdict (Verdict, Wrong, how a reason shows values) · parse (JSON, <answer> tags, JSON inside prose, text) ·
numbers (numbers with every minus and accounting negatives, European numbers, the tolerance) · bounds (a bounded,
negated or approximate number names no value) · dates (dates and months in the forms people write them) · hedges
(one verdict and one value per field, at every depth) · scenarios (a second number beside the asked ones is
another scenario) · restated (margins, differences, ratios, means checked against the gold) · shape (fields, the
kind and scale of a value) · groups (group keys matched and named) · rows (ranking, breakdown) · formats (value,
threshold, trend, comparison, significance) · passage (reading a knowledge text: words,
claims, sentences, the polarity of rule words) · knowledge (key facts, precision, meaning, no inverted rule).

Answers are JSON values or text. Text is parsed as JSON, else the content of its last <answer>…</answer>, else
the first JSON object or array inside it; a "value" task also takes a text holding exactly one number. The
README's "How answers are compared" says what each format accepts. A malformed answer (unparseable, wrong
shape, over 1 MB) is wrong with a reason; `compare` never raises.

May import: dptool.errors (nothing else of dptool; generate and evaluate import it).
"""

from __future__ import annotations

from typing import Any

from dptool.answers import formats
from dptool.answers.knowledge import knowledge, missing_fact
from dptool.answers.numbers import allowed_error, check_number, numbers_in, to_number
from dptool.answers.parse import (
    DuplicateKeys,
    Malformed,
    Text,
    holds_non_finite,
    parse_answer,
    read_json,
    repeated_key,
)
from dptool.answers.verdict import (
    CONTRADICTED,
    FACT,
    HEDGED,
    MALFORMED,
    NO_ANSWER,
    ROWS,
    VALUE,
    VERDICT,
    Verdict,
    Wrong,
)

DEFAULT_TOLERANCE = {"rel_tol": 0.001, "abs_tol": 1e-6}

COMPARATORS = {"value": formats.value, "ranking": formats.ranking, "threshold": formats.threshold,
               "trend": formats.trend, "comparison": formats.comparison, "significance": formats.significance,
               "breakdown": formats.breakdown, "knowledge": knowledge}


def compare(task: dict, answer: Any, *, against: str = "gold") -> Verdict:
    """Compare one answer with the task's `gold` (or `base`, the answer without rules). Never raises."""
    if answer is None:
        return Verdict(False, "no answer", NO_ANSWER)
    fmt = task.get("answer_format") or {}
    comparator = COMPARATORS.get(fmt.get("type"))
    if comparator is None:
        return Verdict(False, f"unknown answer format {fmt.get('type')!r}", MALFORMED)
    expected = task.get(against)
    if expected is None and against == "base":
        expected = task.get("gold")  # a task without rules has one answer
    if isinstance(answer, str) and not answer.strip():
        return Verdict(False, "no answer", NO_ANSWER)
    if isinstance(answer, Malformed):
        return Verdict(False, answer.reason, MALFORMED)
    try:
        parsed = parse_answer(answer, embedded=fmt["type"] != "knowledge")
        tolerance = task.get("tolerance") or DEFAULT_TOLERANCE
        # what the question states: a knowledge answer's precision, a restated year or threshold
        comparator(parsed, expected, fmt, tolerance, str(task.get("question") or ""))
    except Wrong as exc:
        return Verdict(False, str(exc), exc.kind)
    except (TypeError, ValueError, KeyError, AttributeError, ArithmeticError, RecursionError) as exc:
        # an answer shape no rule above foresaw: it scores 0, the run goes on
        return Verdict(False, f"malformed answer ({type(exc).__name__}: {' '.join(str(exc).split())[:80]})",
                       MALFORMED)
    return Verdict(True)


__all__ = ["CONTRADICTED", "COMPARATORS", "DEFAULT_TOLERANCE", "FACT", "HEDGED", "MALFORMED", "NO_ANSWER", "ROWS",
           "VALUE", "VERDICT", "DuplicateKeys", "Malformed", "Text", "Verdict", "Wrong", "allowed_error",
           "check_number", "compare", "holds_non_finite", "missing_fact", "numbers_in", "parse_answer", "read_json",
           "repeated_key", "to_number"]
