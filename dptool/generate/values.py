"""A slice or group value as a question says it: in words where the value itself is invisible (a blank, NULL), and
refused where no wording has one reading.

A question's whitespace is normalised (one space between words), so a value is said by words that survive it: a
single space is "the blank payment characterization (' ')", several are "(3 spaces)", NULL is "payment
characterization not recorded (NULL)". A value whose words are another value's ("SIPO " and "SIPO", "a_b" and "a b")
or that holds a character no one can type or see (a control character, a non-breaking space) is not asked.
"""

from __future__ import annotations

import unicodedata


def spoken(value) -> str:
    """A data value as a person would write it (snake_case categories become words)."""
    return str(value).replace("_", " ")


def _blank(value) -> bool:
    return isinstance(value, str) and set(value) <= {" "}


def _literal(value: str) -> str:
    """A blank value's literal as a question can show it: "' '", "''" or "3 spaces"."""
    return f"'{value}'" if len(value) <= 1 else f"{len(value)} spaces"


def said(label: str, value) -> str:
    """A value of the dimension `label` as a question names it: "seller state RJ", "the blank payment
    characterization (' ')", "the empty payment characterization ('')", "payment characterization not recorded
    (NULL)"."""
    if value is None:
        return f"{label} not recorded (NULL)"
    if _blank(value):
        return f"the {'empty' if value == '' else 'blank'} {label} ({_literal(value)})"
    return f"{label} {spoken(value)}"


def is_value(value) -> str:
    """What "whose <label> is ..." says of a value: "RJ", "blank (' ')", "not recorded (NULL)"."""
    if value is None:
        return "not recorded (NULL)"
    if _blank(value):
        return f"{'empty' if value == '' else 'blank'} ({_literal(value)})"
    return spoken(value)


def _read(text: str) -> str:
    """What a reader of the question sees: its whitespace normalised."""
    return " ".join(text.split())


def unsayable(value, others, label: str = "") -> str | None:
    """Why no question can name `value` in one reading (None when one can): a character no one can type or see, or
    words that name another of the dimension's values (`others`) too. The reason is one line."""
    if isinstance(value, str):
        for ch in value:
            category = unicodedata.category(ch)
            if category in ("Cc", "Cf", "Co", "Cs", "Cn"):
                return f"slice value {value!r} holds the control or invisible character {ch!r}: no question can " \
                       "say it"
            if ch != " " and (category.startswith("Z") or ch.isspace()):
                return f"slice value {value!r} holds the white space {ch!r}, which reads as a space: no question " \
                       "can say it"
    mine = _read(said(label, value))
    twin = next((o for o in others if o != value and _read(said(label, o)) == mine), _NONE)
    if twin is not _NONE:
        return f"slice value {value!r} reads as {mine.removeprefix(label).strip()!r}, as the value {twin!r} does: " \
               "no question can tell them apart"
    return None


_NONE = object()
