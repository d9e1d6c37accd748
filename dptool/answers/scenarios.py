"""A second number beside the asked ones is another scenario, and a hedge: `{"value": 52, "with_policy": 60}`,
whatever the second field is called ("actual", "status_quo", "scenario_b", …). It is decided by shape, not by
name: any field holding a number that stands alone (a number, a short text with a number, a list of them, an
object whose only number it is) and is neither asked nor a fact the format knows how to check. An object with
several numbers or a list of objects is detail (a breakdown, a monthly series), not a second value.

A number is no second scenario when it restates the question: a number the question states (its year, its
threshold, its k), a date or a month, a year or a period number under a period's name (`"year": 2017`,
`"quarter": 4`), a sample size (`"n": 42`), anything under a unit's name (`"unit": "per 1,000 orders"`), or an
object under a detail's name (`"details": {"loans": 42}`). Text of more than a few words (a note, the SQL) is
prose, not a value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from dptool.answers.dates import date_spans
from dptool.answers.numbers import numbers_in
from dptool.answers.verdict import HEDGED, Wrong, field_name, fold, short

PROSE_WORDS = 5  # a text with more words than this beside its numbers is prose, not a value
MAX_VALUE_CHARS = 200  # a date is read in a text of at most this: bounds the work on a hostile one
_PERIODS = frozenset(field_name(w) for w in [
    "year", "years", "quarter", "month", "period", "date", "day", "week", "half", "window", "from", "to", "start",
    "end", "start_date", "end_date", "as_of", "since", "until", "time", "timeframe", "time_period", "date_range",
    "range", "interval", "fiscal_year", "semester"])
_UNITS = frozenset(field_name(w) for w in ["unit", "units", "currency", "format", "scale", "measure", "metric"])
# a sample size restates what the value was computed over; an object under a detail's name is its working
_SAMPLE = frozenset(field_name(w) for w in ["n", "sample_size", "n_rows", "row_count", "rows", "observations",
                                            "n_obs", "num_rows", "records", "sample", "n_a", "n_b", "count_a",
                                            "count_b", "sample_size_a", "sample_size_b"])
_DETAIL = frozenset(field_name(w) for w in [
    "details", "detail", "notes", "note", "meta", "metadata", "context", "support", "supporting", "breakdown",
    "components", "inputs", "info", "extra", "calculation", "computation", "method", "methodology", "working",
    "work", "evidence", "explanation", "sql", "query", "data", "source", "sources"])
_WORD = re.compile(r"[^\W\d_]+")


def _numbers(x: Any) -> list[float] | None:
    """The numbers a leaf holds as a value (None when it holds none, or is prose)."""
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, int | float):
        return [float(x)]
    if not isinstance(x, str) or not any(ch.isdigit() for ch in x):
        return None
    if len(_WORD.findall(x)) > PROSE_WORDS:
        return None
    # dates are looked for in a short text only: blanking them one by one is quadratic
    _, rest = date_spans(fold(x) or "") if len(x) <= MAX_VALUE_CHARS else ([], x)
    found = [n.value for n in numbers_in(rest, 20)]
    return found or None


def _leaves(value: Any, key: str) -> Iterator[tuple[str, Any]]:
    """(the nearest field name, leaf) of everything inside a value; without recursion."""
    stack = [(key, value)]
    while stack:
        name, x = stack.pop()
        if isinstance(x, dict):
            stack.extend((str(k), v) for k, v in x.items())
        elif isinstance(x, list):
            stack.extend((name, v) for v in x)
        else:
            yield name, x


def _restates(name: str, numbers: list[float], stated: list[float], same: list[float], tolerance: float) -> bool:
    if field_name(name) in _UNITS or field_name(name) in _SAMPLE:
        return True
    if all(any(math.isclose(n, s, rel_tol=1e-9, abs_tol=1e-9) for s in stated) or
           any(abs(n - s) <= tolerance * max(1.0, abs(s) / max(abs(same[0]), 1e-12)) for s in same)
           for n in numbers):
        return True
    return field_name(name) in _PERIODS and all(n.is_integer() and (1 <= n <= 53 or 1900 <= n <= 2100)
                                                 for n in numbers)


def no_second_number(answer: dict, skip: set[str], question: str = "", same: tuple[float, ...] = (),
                     tolerance: float = 0.0) -> None:
    """Raise Wrong (hedged) when a field of the answer other than `skip` (field names as field_name reads them)
    holds a number standing alone that restates neither the question nor the answer's own value (`same`, within
    `tolerance`: "rounded": 1235 beside 1234.5):
    number, a short text with one, a list of them, or an object in which it is the only one. An object with
    several numbers, or a list of objects, is detail (a breakdown, a monthly series), not a value."""
    stated = [n.value for n in numbers_in(question)] if question else []
    stated += [s / 100 for s in stated] + [s * 100 for s in stated]
    own = [x * f for x in same for f in (1.0, 100.0, 0.01)]  # a share restated in percent too
    for key, value in answer.items():
        if field_name(key) in skip:
            continue
        if isinstance(value, list) and any(isinstance(x, dict | list) for x in value) or (
                isinstance(value, dict) and field_name(key) in _DETAIL):
            continue  # rows of detail, or the working under a detail's name
        alone = [(name, leaf) for name, leaf in _leaves(value, str(key))
                 if (numbers := _numbers(leaf)) and not _restates(name, numbers, stated, own, tolerance)]
        if alone and (not isinstance(value, dict) or len(alone) == 1):
            name, leaf = alone[0]
            where = str(key) if name == str(key) else f"{key}.{name}"
            raise Wrong(f"hedged answer: a second number in {where[:60]!r}, {short(leaf)} (another scenario "
                        "beside the asked one?)", HEDGED)
