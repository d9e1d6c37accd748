"""What a comparison says: a Verdict, the Wrong that carries its reason, and how values are shown in a reason."""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Verdict:
    """Whether an answer matches, and why not (empty when it does)."""

    correct: bool
    reason: str = ""
    kind: str = ""  # one of NO_ANSWER, MALFORMED, HEDGED, CONTRADICTED, VALUE, VERDICT, ROWS, FACT when wrong


NO_ANSWER, MALFORMED, HEDGED, CONTRADICTED, VALUE, VERDICT, ROWS, FACT = (
    "no answer", "malformed answer", "hedged answer", "contradictory answer", "wrong value", "wrong verdict",
    "wrong rows", "missing key fact")


class Wrong(Exception):
    """The answer does not match its gold; the message says why, in one line, and `kind` sums it up."""

    def __init__(self, message: str, kind: str = MALFORMED):
        super().__init__(message)
        self.kind = kind


def short(x: Any) -> str:
    """A value as a reason quotes it: at most 60 characters."""
    text = x if isinstance(x, str) else json.dumps(x, sort_keys=True, default=str)
    return repr(text[:60] + ("…" if len(text) > 60 else ""))


def fmt(x: float | None) -> str:
    """A number as a reason shows it."""
    return "NULL" if x is None else f"{x:.10g}"


def fold(x: Any) -> str | None:
    """Text compared case-, accent- and space-insensitively (None stays None; 3.0 is "3")."""
    if x is None:
        return None
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    return " ".join(fold_text(str(x)).split())


def fold_text(text: str) -> str:
    """Text without case, accents and compatibility forms ("Ｓão" is "sao"), its lines kept."""
    text = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()


_NOT_ALNUM = re.compile(r"[^0-9a-z]+")


def field_name(key: Any) -> str:
    """A field name as the scorer reads it: "Result", "p-value", "P Value" and "p_value" are one name."""
    return _NOT_ALNUM.sub("", fold_text(str(key)))
