"""What an answer is made of, as every format reads it: its fields, the kind of value it is, the scale of its
numbers, and whether a field could hold a second value."""

from __future__ import annotations

from typing import Any

from dptool.answers.hedges import top_fields
from dptool.answers.numbers import numbers_in
from dptool.answers.parse import Text
from dptool.answers.verdict import Wrong, field_name, short


def percent_scale(fmt: dict) -> str | None:
    """ "fraction" when the task's numbers are shares stored 0–1, else None."""
    return "fraction" if fmt.get("format") == "percent" else None


def require_dict(answer: Any, kind: str) -> dict:
    """The answer, when it is a JSON object; raises Wrong otherwise."""
    if not isinstance(answer, dict):
        raise Wrong(f"expected a JSON object for a {kind} answer, got {kind_of(answer)}")
    return answer


def kind_of(x: Any) -> str:
    """What an answer is, as a reason names it: "an object", "text '…'"."""
    if isinstance(x, Text):
        return f"text {short(x.text)}"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(x), "a number")


def field(answer: dict, name: str, *aliases: str) -> Any:
    """The value of a top-level field by its name or an alias; raises Wrong when none is there."""
    fields = top_fields(answer)
    for key in (name, *aliases):
        if field_name(key) in fields:
            return fields[field_name(key)]
    raise Wrong(f"missing field {name!r}")



def numeric(x: Any) -> bool:
    """Whether a field holds what could be a second value: a number, a text with one, an object or a list."""
    if isinstance(x, bool):
        return False
    return isinstance(x, int | float | dict | list) or (isinstance(x, str) and bool(numbers_in(x, 1)))
