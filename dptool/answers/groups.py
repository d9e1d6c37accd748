"""Group keys: how an answer's groups are matched with the gold's (case, accents, NULL, DECIMAL spellings), how a
reason names them, and which group a field is named after ("value_RS", "mean_PR")."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from dptool.answers.verdict import field_name, fold

_NULL_NAMES = frozenset(["null", "none", "(null)", "<null>", "[null]", "nil", "n/a", "(none)"])


# how a question and the conventions name a blank group ("the blank payment characterization (' ')") and a NULL one
# ("payment characterization not recorded (NULL)"), and how an agent may echo them ("blank", "' '", "(empty)")
_BLANK_NAME = re.compile(r"""blank|empty|[(<\[](?:blank|empty)[)>\]]|'\s*'|"\s*"|the (?:blank|empty)\b.*"""
                         r"""|.*\(\s*(?:'\s*'|"\s*"|\d+ spaces)\s*\)""")
_NULL_NAME = re.compile(r".*\bnot recorded\b.*|.*\(null\)")


class Keys:
    """Group keys compared case-, accent- and space-insensitively, unless that would merge gold keys; "NULL" or
    "null" names the NULL group when the gold has one and no group of that name; "blank", "' '" or the question's
    "the blank payment characterization (' ')" names the one blank group (a value of spaces only) the gold has, when
    no gold group has that name; a decimal is one key however many zeros end it ("99.00" is 99, "24.50" is 24.5, as
    DECIMAL columns print them)."""

    def __init__(self, gold_keys: list[Any]):
        folded = [_folded(k) for k in gold_keys]
        self.exact = len(set(folded)) < len(folded) and len({_exact(k) for k in gold_keys}) == len(gold_keys)
        self.null_names = _NULL_NAMES - set(folded) if None in gold_keys else frozenset()
        self.named = set(folded)
        self.has_null = None in gold_keys
        blanks = [k for k in gold_keys if isinstance(k, str) and set(k) <= {" "}]
        self.blank = blanks[0] if len(blanks) == 1 else None

    def __call__(self, key: Any) -> str | None:
        if isinstance(key, str):
            name = fold(key)
            if name in self.null_names or (self.has_null and name not in self.named and _NULL_NAME.fullmatch(name)):
                return None
            if self.blank is not None and name not in self.named and _BLANK_NAME.fullmatch(name):
                key = self.blank
        return _exact(key) if self.exact else _folded(key)


_DECIMAL = re.compile(r"[+-]?\d+\.\d*")


def _folded(x: Any) -> str | None:
    text = fold(x)
    if text is not None and _DECIMAL.fullmatch(text):  # "99.00" and 99, "24.50" and 24.5
        text = text.rstrip("0").rstrip(".") or "0"
    return text


def _exact(x: Any) -> str | None:
    return None if x is None else str(x)


def show(key: Any) -> str:
    """A group key as a reason names it (a blank one as its literal, "' '")."""
    if isinstance(key, str) and set(key) <= {" "}:
        return f"'{key}'"
    return "NULL" if key is None else str(key)




_GROUP_AFFIXES = ("value", "mean", "avg", "average", "total", "metric")


def group_namer(keys: Keys, groups: list[Any]) -> Callable[[Any], Any]:
    """A function giving the compared group a field is named after ("RS", "value_RS", "mean_PR",
    "south_moravia_avg"), or None."""
    by_key = {keys(g): g for g in groups}
    by_name = {field_name(show(g)): g for g in groups if g is not None}

    def named(key: Any) -> Any:
        if keys(key) in by_key:
            return by_key[keys(key)]
        name = field_name(key)
        for affix in _GROUP_AFFIXES:
            if name.startswith(affix) and name[len(affix):] in by_name:
                return by_name[name[len(affix):]]
            if name.endswith(affix) and name[:-len(affix)] in by_name:
                return by_name[name[:-len(affix)]]
        return None

    return named
