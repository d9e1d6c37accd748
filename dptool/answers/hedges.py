"""One claim per question: a structured answer states its verdict once and each asked value once, at every depth.

A second verdict-like field, a verdict or direction written anywhere else, a field that offers alternatives
("possible_results", "alternatives", "or_maybe"), an asked field again inside a nested object (a second
`value` or `higher` in `details`, the base answer nested beside the gold one) is a hedge, and wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from dptool.answers.verdict import HEDGED, Wrong, field_name, fold, short

VERDICTS = {"pass": "PASS", "fail": "FAIL", "true": "PASS", "false": "FAIL", "yes": "PASS", "no": "FAIL"}
DIRECTIONS = {**{w: "increasing" for w in ("increasing", "increase", "increased", "up", "upward", "upwards", "rising",
                                           "rise", "growing", "grew", "growth")},
              **{w: "decreasing" for w in ("decreasing", "decrease", "decreased", "down", "downward", "downwards",
                                           "falling", "fall", "fell", "declining", "decline", "declined")},
              **{w: "flat" for w in ("flat", "stable", "steady", "unchanged", "constant", "no trend")}}
# names of fields that state a verdict, and verdicts written as values
VERDICT_FIELDS = frozenset(field_name(f) for f in [
    "result", "verdict", "status", "outcome", "conclusion", "decision", "answer", "pass", "passed", "passes", "fail",
    "failed", "met", "exceeds", "significant", "is_significant", "significance", "direction", "trend", "higher",
    "lower", "winner", "loser", "higher_group", "lower_group", "larger", "smaller", "better", "worse"])
VERDICT_VALUES = frozenset([*VERDICTS, *DIRECTIONS, "significant", "not significant", "insignificant",
                            "statistically significant", "not statistically significant"])
# words of a field name that offer alternatives: "possible_results", "alternatives", "orMaybe"
_HEDGE_WORDS = frozenset(["alternative", "alternatives", "alt", "alts", "possible", "possibly", "maybe", "perhaps",
                          "otherwise", "either", "option", "options", "candidate", "candidates", "or", "else",
                          "guess", "guesses", "unsure", "uncertain", "could", "might", "probably", "likely",
                          "backup", "fallback", "without", "base", "baseline", "unadjusted", "ignoring", "if",
                          "instead", "before", "original"])  # "without_policy", "if_base": the other answer
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def offers_alternatives(key: Any, value: Any) -> bool:
    """Whether a field offers alternatives: named so ("possible_results", "alternatives", "orMaybe",
    "without_policy") and holding something that could be an answer (a number, a verdict, a list or an object;
    "base_currency": "CZK" offers nothing)."""
    if isinstance(value, str) and not is_verdict_like(value) and not any(ch.isdigit() for ch in value):
        return False
    return any(w.lower() in _HEDGE_WORDS for w in _NAME_WORDS.findall(str(key)))


def is_verdict_like(value: Any) -> bool:
    """A verdict, a boolean or a trend direction written as a value."""
    return isinstance(value, bool) or (isinstance(value, str) and fold(value) in VERDICT_VALUES)


def top_fields(answer: dict) -> dict[str, Any]:
    """The answer's top-level fields by name as the scorer reads them ("Result" is "result"); two fields that
    read as one ("result" and "Result") are a hedge."""
    named: dict[str, tuple[str, Any]] = {}
    for key, value in answer.items():
        name = field_name(key)
        if name in named:
            raise Wrong(f"hedged answer: {named[name][0]!r} and {key!r} are one field written twice", HEDGED)
        named[name] = (key, value)
    return {name: value for name, (_, value) in named.items()}


def one_verdict(answer: dict, own: tuple[str, ...], fields: tuple[str, ...],
                names_group: Callable[[Any], bool] | None = None) -> None:
    """Raise Wrong (hedged) unless the answer states its verdict once: in one of its `own` verdict fields, with no
    other field named like a verdict or holding a verdict (or, a comparison, naming a group), no field offering
    alternatives, and nothing below the top level that restates a verdict or an asked field."""
    given = [k for k in answer if field_name(k) in {field_name(o) for o in own}]
    if len(given) > 1:
        raise Wrong(f"hedged answer: both {given[0]!r} and {given[1]!r} state the verdict", HEDGED)
    asked = {field_name(f) for f in (*own, *fields)}
    for key, value in answer.items():
        if field_name(key) in asked:
            if field_name(key) in {field_name(o) for o in own} and isinstance(value, list) and len(value) > 1:
                raise Wrong(f"hedged answer: {key!r} is a list of {len(value)} where one is asked", HEDGED)
            continue
        if field_name(key) in VERDICT_FIELDS:
            raise Wrong(f"hedged answer: a second verdict in {key!r}", HEDGED)
        if is_verdict_like(value):
            raise Wrong(f"hedged answer: {key!r} holds a second verdict, {short(value)}", HEDGED)
        if names_group and isinstance(value, str | int | float) and names_group(value):
            raise Wrong(f"hedged answer: {key!r} names a group, {short(value)}", HEDGED)
        if offers_alternatives(key, value):
            raise Wrong(f"hedged answer: {key!r} offers alternatives", HEDGED)
        restated = [a for a in asked if len(a) >= 5 and a in field_name(key)]
        if len(restated) == 1 and _numeric(value):  # "value_2", "other_value": a second value ("threshold_value"
            raise Wrong(f"hedged answer: a second {restated[0]!r} in {key!r}", HEDGED)  # names two: a restatement)
    for key, value in answer.items():
        if isinstance(value, dict | list):
            nested_claims(value, str(key), asked | VERDICT_FIELDS, verdicts=True, names_group=names_group)


def _numeric(x: Any) -> bool:
    return not isinstance(x, bool) and (isinstance(x, int | float) or (isinstance(x, str) and any(
        ch.isdigit() for ch in x)))


def nested_claims(value: Any, where: str, asked: set[str] | frozenset[str], *, verdicts: bool,
                  names_group: Callable[[Any], bool] | None = None) -> None:
    """Raise Wrong (hedged) when something below the top level of an answer claims again what it answers: a field
    named like an `asked` one, a field offering alternatives, a verdict (when `verdicts`) or a compared group."""
    for path, key, x in _walk(value, where):
        if key is not None and field_name(key) in asked:
            raise Wrong(f"hedged answer: a second {key!r} in {path!r}", HEDGED)
        if key is not None and offers_alternatives(key, x):
            raise Wrong(f"hedged answer: {path + '.' + str(key)!r} offers alternatives", HEDGED)
        if verdicts and is_verdict_like(x):
            raise Wrong(f"hedged answer: {path!r} holds a second verdict, {short(x)}", HEDGED)
        if names_group and isinstance(x, str | int | float) and not isinstance(x, bool) and names_group(x):
            raise Wrong(f"hedged answer: {path!r} names a group, {short(x)}", HEDGED)


def no_other_verdict_in_text(answer: dict, own: tuple[str, ...], said: str, named: Callable[[str], set[str]]) -> None:
    """Raise Wrong (hedged) when free text anywhere in the answer (a "note", an "explanation") names a verdict
    other than the one the answer states: {"result": "FAIL", "note": "PASS before the policy"}."""
    skip = {field_name(o) for o in own}
    for path, key, x in _walk(answer, ""):
        if isinstance(x, str) and not (path == "" and key is not None and field_name(key) in skip):
            other = named(x) - {said}
            if other:
                where = f"{path}.{key}".strip(".") if key is not None else path.strip(".")
                raise Wrong(f"hedged answer: {where!r} names another verdict, {short(x)}", HEDGED)


def _walk(value: Any, where: str) -> Iterator[tuple[str, str | None, Any]]:
    """(path, key, value) of everything inside a value, a key for each field, None for a list's items; without
    recursion (a deeply nested answer must not raise)."""
    stack = [(where, value)]
    while stack:
        path, x = stack.pop()
        if isinstance(x, dict):
            for k, v in x.items():
                yield path, k, v
                stack.append((f"{path}.{k}"[:80], v))
        elif isinstance(x, list):
            for i, v in enumerate(x):
                yield path, None, v
                stack.append((f"{path}[{i}]"[:80], v))
