"""What a metric's value rests on, read from its `value` expression: the rows, a rate's events, the entity.

`avg(case when status = 'B' then 1.0 when status = 'A' then 0.0 end)` is computed over the finished loans (the
rows where its argument is not NULL), not every loan; a ratio `sum(a) / sum(b)` over the rows its denominator
reads (b not NULL and not 0); `count(distinct seller_id)` counts sellers. A rate (format percent) rests also on
the events of its numerator: the rows whose numerator argument is not 0. The support query counts these
(dptool.support), so a rate on 3 events or a per-seller value on 2 sellers is thin.
"""

from __future__ import annotations

import re

from dptool.project.catalog import Catalog

AGGREGATE = re.compile(r"\b(avg|sum|count|min|max|median|stddev_samp|stddev_pop|stddev|var_samp|var_pop|variance)"
                       r"\s*\(", re.I)
DISTINCT = re.compile(r"^\s*distinct\s+", re.I)
COLUMN = re.compile(r"^\s*\"?([A-Za-z_][A-Za-z0-9_]*)\"?\s*$")


def _outside_quotes(text: str, start: int = 0):
    """(index, character, depth) of each character of `text` from `start` that is not inside quotes, the depth of
    parentheses counted from `start` (a closing parenthesis has the depth it closes to)."""
    depth, quote = 0, None
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            quote = None if ch == quote else quote
            continue
        if ch in "'\"":
            quote = ch
            continue
        depth += (ch == "(") - (ch == ")")
        yield i, ch, depth


def _close(text: str, start: int) -> int:
    """The index of the parenthesis closing the one opened just before `start` (quotes skipped)."""
    return next((i for i, ch, depth in _outside_quotes(text, start) if ch == ")" and depth == -1), len(text))


def calls(value: str) -> list[tuple[str, str, int]]:
    """The outermost aggregate calls of an expression: (function, argument, position), in order."""
    found, at = [], 0
    while (m := AGGREGATE.search(value, at)) is not None:
        end = _close(value, m.end())
        found.append((m.group(1).lower(), value[m.end():end].strip(), m.start()))
        at = end + 1
    return found


def _division(value: str) -> int | None:
    """The position of the first `/` outside parentheses and quotes (a ratio's), None without one."""
    return next((i for i, ch, depth in _outside_quotes(value) if ch == "/" and depth == 0), None)


def _read(function: str, argument: str) -> str | None:
    """The rows one aggregate call reads, as a predicate; None for every row (count(*))."""
    argument = DISTINCT.sub("", argument)
    if argument == "*" or not argument:
        return None
    return f"({argument}) is not null"


def _nonzero(function: str, argument: str) -> str | None:
    """The rows that add to one aggregate call (its events); None for every row."""
    argument = DISTINCT.sub("", argument)
    if argument == "*" or not argument:
        return None
    if function == "count":
        return f"({argument}) is not null"
    return f"({argument}) <> 0"


def _any(predicates: list[str | None]) -> str | None:
    """Rows any of the predicates holds for; None (every row) when one of them is every row or none is given."""
    if not predicates or any(p is None for p in predicates):
        return None
    return " or ".join(dict.fromkeys(predicates)) if len(predicates) > 1 else predicates[0]


def rests_on(value: str, rate: bool) -> dict:
    """{"rows": predicate or None, "events": predicate or None} of a metric computed over one model's rows.

    The rows: those its denominator reads, for a ratio (`... / sum(b)`: b not 0; `... / count(distinct x)`: x
    not NULL); else those any of its aggregates reads (`avg(x)`: x not NULL). The events (a rate's only): the rows
    whose numerator argument is not 0 (`avg(flag)`: flag <> 0; `sum(a) / sum(b)`: a <> 0)."""
    found = calls(value)
    if not found:
        return {"rows": None, "events": None}
    cut = _division(value)
    denominator = [c for c in found if cut is not None and c[2] > cut][:1]
    numerator = [c for c in found if cut is None or c[2] < cut]
    if denominator:
        function, argument, _ = denominator[0]
        rows = _nonzero(function, argument) if function == "sum" else _read(function, argument)
    else:
        rows = _any([_read(f, a) for f, a, _ in found])
    events = _any([_nonzero(f, a) for f, a, _ in numerator]) if rate and numerator else None
    return {"rows": rows, "events": events}


def counted(catalog: Catalog, metric_ids) -> dict[str, dict]:
    """What each leaf metric under `metric_ids` rests on, by metric id (the support macro's `counted`): its rows,
    its events when it is a rate (a composite's events are those of the rates it is computed from), and its own
    entity (declared, or the column it counts distinct values of)."""
    leaves = {m for metric_id in metric_ids for m in catalog.metric_tree(metric_id)
              if not catalog.metrics[m].components}
    out = {}
    for m in sorted(leaves):
        metric = catalog.metrics[m]
        out[m] = rests_on(metric.value, metric.format == "percent")
        if metric.entity or distinct_column(metric.value):
            out[m]["entity"] = metric.entity or distinct_column(metric.value)
    return out


def distinct_column(value: str) -> str:
    """The column a `count(distinct x)` metric counts ("" for any other value): its entity, what it rests on."""
    m = re.fullmatch(r"\s*count\s*\(\s*distinct\s+(.*)\)\s*", value, re.I | re.S)
    column = COLUMN.match(m.group(1)) if m else None
    return column.group(1) if column else ""
