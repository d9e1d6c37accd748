"""Could one answer score right against both the gold and the base? One function per answer format.

A rule task tests the rule only when no answer is right under both readings: every number's window (the gold's
value within the task's tolerance, and the base's within its own) must be apart, or a verdict the scorer checks
exactly (a direction, a peak month, the higher group, significance, PASS/FAIL, a ranking's order, a breakdown's
groups) must differ. Fields the scorer reads only when an answer restates them decide nothing here.
"""

from __future__ import annotations

import json

from dptool.answers import DEFAULT_TOLERANCE
from dptool.answers.dates import parse_period
from dptool.answers.formats import P_VALUE_TOLERANCE
from dptool.answers.numbers import allowed_error


def numbers_meet(gold, base, tol: dict) -> bool:
    """Is some number within the tolerance of both (each window around its own value)? Two blanks meet."""
    if gold is None or base is None:
        return gold is None and base is None
    gold, base = float(gold), float(base)
    return abs(gold - base) <= allowed_error(gold, tol) + allowed_error(base, tol)


def _period(x):
    try:
        return parse_period(x)
    except (ValueError, TypeError):
        return x


def value(gold: dict, base: dict, fmt: dict, tol: dict) -> bool:
    return numbers_meet(gold.get("value"), base.get("value"), tol)


def threshold(gold: dict, base: dict, fmt: dict, tol: dict) -> bool:
    return gold.get("result") == base.get("result") and numbers_meet(gold.get("value"), base.get("value"), tol)


def trend(gold: dict, base: dict, fmt: dict, tol: dict) -> bool:
    return (gold.get("direction") == base.get("direction")
            and _period(gold.get("peak_period")) == _period(base.get("peak_period"))
            and numbers_meet(gold.get("total_change_pct"), base.get("total_change_pct"), tol))


def comparison(gold: dict, base: dict, fmt: dict, tol: dict) -> bool:
    same = {str(gold.get("group_a")), str(gold.get("group_b"))} == {str(base.get("group_a")), str(base.get("group_b"))}
    if not same or str(gold.get("higher")) != str(base.get("higher")):
        return False
    flipped = str(gold.get("group_a")) != str(base.get("group_a"))
    pairs = (("value_a", "value_b"), ("value_b", "value_a")) if flipped else (("value_a", "value_a"),
                                                                              ("value_b", "value_b"))
    return all(numbers_meet(gold.get(g), base.get(b), tol) for g, b in pairs)


def significance(gold: dict, base: dict, fmt: dict, tol: dict) -> bool:
    # the means are optional in an answer: the verdict and the p-value (within its own tolerance) decide
    return gold.get("significant") == base.get("significant") and \
        numbers_meet(gold.get("p_value"), base.get("p_value"), {"abs_tol": P_VALUE_TOLERANCE})


def _rows(answer: list, key: str) -> list[tuple[str, object]]:
    return [(json.dumps(g.get(key), default=str), g.get("value")) for g in answer or []]


def ranking(gold: list, base: list, fmt: dict, tol: dict) -> bool:
    g, b = _rows(gold, fmt.get("key")), _rows(base, fmt.get("key"))
    return [k for k, _ in g] == [k for k, _ in b] and all(numbers_meet(x, y, tol)
                                                          for (_, x), (_, y) in zip(g, b, strict=True))


def breakdown(gold: list, base: list, fmt: dict, tol: dict) -> bool:
    g, b = dict(_rows(gold, fmt.get("key"))), dict(_rows(base, fmt.get("key")))
    return g.keys() == b.keys() and all(numbers_meet(g[k], b[k], tol) for k in g)


def knowledge(gold: dict, base: dict, fmt: dict, tol: dict) -> bool:
    # an answer is scored on the facts it states: the same facts are one answer
    return sorted(gold.get("facts") or []) == sorted(base.get("facts") or [])


FORMATS = {"value": value, "threshold": threshold, "trend": trend, "comparison": comparison,
           "significance": significance, "ranking": ranking, "breakdown": breakdown, "knowledge": knowledge}


def one_answer_fits_both(task: dict) -> bool:
    """Could one answer score right against both the task's gold and its base? (A task without a base: no.)"""
    gold, base = task.get("gold"), task.get("base")
    if base is None:
        return False
    if gold == base:
        return True
    fmt = task.get("answer_format") or {}
    check = FORMATS.get(fmt.get("type") or "value")
    if check is None:
        return False
    shape = list if fmt.get("type") in ("ranking", "breakdown") else dict
    if not isinstance(gold, shape) or not isinstance(base, shape):
        return False
    return check(gold, base, fmt, task.get("tolerance") or DEFAULT_TOLERANCE)
