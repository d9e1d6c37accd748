"""Rows: a ranking (the top k groups in order, or in the order their ranks give) and a breakdown (every group, in
any order), read from the shapes people write them in."""

from __future__ import annotations

from collections import Counter
from typing import Any

from dptool.answers.groups import Keys, show
from dptool.answers.hedges import offers_alternatives, top_fields
from dptool.answers.numbers import check_number, to_number
from dptool.answers.scenarios import no_second_number
from dptool.answers.shape import kind_of, numeric, percent_scale
from dptool.answers.verdict import HEDGED, ROWS, Wrong, field_name, short

# fields that give a row's place in a ranking, not its value
RANK_FIELDS = frozenset(field_name(f) for f in ["rank", "ranking", "position", "pos", "place", "no", "nr", "#"])


def rows_of(answer: Any, key: str, question: str = "") -> list[tuple[Any, Any]]:
    """(group, value) pairs from an array of rows: {key: g, "value": v}, {key: g, "revenue": v}, {g: v}, [g, v];
    or from an object {g: v, …} in its order."""
    return [(group, value_) for group, value_, _ in _rows(answer, key, question)]


def _rows(answer: Any, key: str, question: str) -> list[tuple[Any, Any, Any]]:
    """(group, value, rank or None) of each row."""
    if isinstance(answer, dict) and len(answer) == 1:
        inner = next(iter(answer.values()))
        if isinstance(inner, list) or (isinstance(inner, dict) and _scalars(inner)):  # {"ranking": [...]}
            answer = inner
    if isinstance(answer, dict) and answer and _scalars(answer):
        fields = top_fields(answer)  # one row on its own, or {"Sao Paulo": 165548.5, "Rio": 90000} in its order
        one = field_name(key) in fields or "value" in fields
        answer = [answer] if one else [{k: v} for k, v in answer.items()]
    if not isinstance(answer, list):
        raise Wrong(f"expected a JSON array of rows, got {kind_of(answer)}")
    return [_row(i, row, key, question) for i, row in enumerate(answer, 1)]


def _scalars(x: dict) -> bool:
    return not any(isinstance(v, dict | list) for v in x.values())


def _row(i: int, row: Any, key: str, question: str) -> tuple[Any, Any, Any]:
    rank = None
    if isinstance(row, list) and len(row) == 2:
        group, value_ = row
    elif not isinstance(row, dict):
        raise Wrong(f"row {i}: expected {{{key!r}: group, 'value': number}}, got {short(row)}")
    else:
        fields = top_fields(row)
        ranks = [f for f in fields if f in RANK_FIELDS]
        if len(ranks) > 1:
            raise Wrong(f"hedged answer: row {i} gives its rank twice", HEDGED)
        if ranks:
            rank = fields.pop(ranks[0])
        named = {field_name(k): k for k in row}
        if field_name(key) in fields and ("value" in fields or len(fields) == 2):
            group = fields.pop(field_name(key))
            name = "value" if "value" in fields else next(iter(fields))  # the value named after the metric
            value_ = fields.pop(name)
        elif "value" in fields and len(fields) == 2:
            value_ = fields.pop("value")
            name, group = fields.popitem()
            fields = {}
        elif len(fields) == 1:
            name, value_ = fields.popitem()
            group = named[name]
        elif len(fields) == 2 and len(words := [f for f, x in fields.items() if _word_only(x)]) == 1:
            group = fields.pop(words[0])  # {"city": "Sao Paulo", "revenue": 165548.5}: the group is the words
            _, value_ = fields.popitem()
        else:
            raise Wrong(f"row {i}: expected {{{key!r}: group, 'value': number}}, got {short(row)}")
        for k, x in fields.items():  # a field that names the group is free, a second value is not
            if offers_alternatives(named[k], x) or isinstance(x, dict | list) or ("value" in k and numeric(x)):
                raise Wrong(f"hedged answer: row {i} holds a second value in {named[k]!r}", HEDGED)
        no_second_number({named[k]: x for k, x in fields.items()}, set(), question)
    if isinstance(group, dict | list):
        raise Wrong(f"row {i}: the group is not a value: {short(group)}")
    if isinstance(value_, list) and len(value_) > 1:
        raise Wrong(f"hedged answer: row {i} gives a list of {len(value_)} values", HEDGED)
    return group, value_, rank


def _word_only(x: Any) -> bool:
    return isinstance(x, str) and not any(ch.isdigit() for ch in x)


def _in_rank_order(rows: list[tuple[Any, Any, Any]]) -> list[tuple[Any, Any]]:
    """The rows ordered by the ranks they state, or as listed when they state none. Ranks run from 1 (or 0) with
    no gap, each once, but for ties: rows of equal value may share a rank ("1, 2, 2, 4" or "1, 2, 2, 3") and keep
    the order they are listed in. A rank that contradicts the list ("rank": 5, 4, 3, 2, 1 on the gold order)
    reorders it."""
    ranked = [r for r in rows if r[2] is not None]
    if not ranked:
        return [(g, v) for g, v, _ in rows]
    if len(ranked) != len(rows):
        raise Wrong(f"{len(ranked)} of {len(rows)} rows state a rank")
    ranks = []
    for i, (_, _, rank) in enumerate(rows, 1):
        n = to_number(rank, f"row {i} rank").value
        if n is None or not n.is_integer():
            raise Wrong(f"row {i}: rank {short(rank)} is not a whole number")
        ranks.append(int(n))
    if min(ranks) == 0:
        ranks = [r + 1 for r in ranks]  # counted from 0, as an index prints them
    order = sorted(zip(rows, ranks, strict=True), key=lambda p: p[1])  # stable: ties keep their listed order
    if not _ranks_hold(order):
        raise Wrong(f"the ranks {', '.join(map(str, ranks[:10]))} are not 1 to {len(rows)}, each once but for "
                    "rows of equal value", ROWS)
    return [(g, v) for (g, v, _), _ in order]


def _ranks_hold(order: list[tuple[tuple[Any, Any, Any], int]]) -> bool:
    """Sorted ranks that start at 1 and go up by one, or (after a tie) by one or by the size of the tie, with
    rows of one rank sharing one value."""
    previous, run = 0, 0
    for _, rank in order:
        if rank == previous:
            run += 1
            continue
        if rank not in (previous + 1, previous + run + 1):  # "1, 2, 2, 3" or "1, 2, 2, 4"
            return False
        previous, run = rank, 0
    ties: dict[int, set] = {}
    for (_, value_, _), rank in order:
        try:
            ties.setdefault(rank, set()).add(to_number(value_, "value").value)
        except Wrong:
            return True  # the value itself is refused, with its own reason, when it is compared
    return all(len(values) == 1 for values in ties.values())


def ranking(answer: Any, gold: list[dict], fmt: dict, tol: dict, question: str = "") -> None:
    """The top k groups in order, each with its value; the order is the rows' ranks when they state them."""
    key = fmt["key"]
    rows = _in_rank_order(_rows(answer, key, question))
    keys = Keys([g[key] for g in gold])
    if len(rows) != len(gold):
        raise Wrong(f"expected {len(gold)} rows, got {len(rows)}", ROWS)
    readings: set[str] = set()
    for i, ((group, value_), g) in enumerate(zip(rows, gold, strict=True), 1):
        if keys(group) != keys(g[key]):
            raise Wrong(f"row {i}: expected {show(g[key])}, got {show(group)}", ROWS)
        check_number(value_, g["value"], tol, f"row {i} ({show(g[key])})", percent_scale(fmt), readings=readings)


def breakdown(answer: Any, gold: list[dict], fmt: dict, tol: dict, question: str = "") -> None:
    """Every group with its value, in any order."""
    key = fmt["key"]
    if isinstance(answer, dict) and answer and not any(isinstance(v, dict | list) for v in answer.values()) and (
            len(answer) > 1 or field_name(next(iter(answer))) not in ("value", field_name(key))):  # {"delivered": 0.4}
        rows = list(answer.items())  # {"SP": 1.2, "RJ": 3.4}: a set needs no order (duplicate keys are refused)
    else:
        rows = rows_of(answer, key, question)
    keys = Keys([g[key] for g in gold])
    counts = Counter(keys(group) for group, _ in rows)
    for group, _ in rows:  # a duplicated row is an error, never merged away
        if counts[keys(group)] > 1:
            raise Wrong(f"group {show(group)} appears {counts[keys(group)]} times", ROWS)
    given = {keys(group): value_ for group, value_ in rows}
    expected = {keys(g[key]): g for g in gold}
    missing = [show(g[key]) for k, g in expected.items() if k not in given]
    if missing:
        raise Wrong(f"missing groups: {', '.join(missing[:5])}", ROWS)
    extra = [show(group) for group, _ in rows if keys(group) not in expected]
    if extra:
        raise Wrong(f"unexpected groups: {', '.join(extra[:5])}", ROWS)
    readings: set[str] = set()
    for k, g in expected.items():
        check_number(given[k], g["value"], tol, f"group {show(g[key])}", percent_scale(fmt), readings=readings)
