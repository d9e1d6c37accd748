"""Numbers in answers: read from JSON or text with their sign, and compared with a gold within its tolerance.

A minus is any of the dashes people and word processors write (-, ‐, ‑, ‒, –, —, −, ﹣, －), a minus then a
space at the start of a value ("- 13.46"), or an accounting bracket around a value ("(13.46)", "(8,182.15) CZK").
A dash is a sign only where a sign can stand: at the start, after a space, an opening bracket or a separator,
never after a number or glued to a word ("1993-2018", "0–29 days", "top-10" hold no negative number).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from dptool.answers.verdict import HEDGED, MALFORMED, VALUE, Wrong, fmt, short

MINUS = "-\u2010\u2011\u2012\u2013\u2014\u2212\ufe63\uff0d\u2796"
_SIGNS = re.escape("+" + MINUS)  # escaped: "+-‐" unescaped in a class would be a range of every letter
_CURRENCY = "$€£¥₹"
# every piece is bounded ({0,3} spaces, no nested repetition): one pass over a 1 MB text, no backtracking blow-up
_NUMBER = re.compile(
    rf"(?<![\w.])(?P<sign>[{_SIGNS}](?P<gap>[ \t]?)(?=[{_CURRENCY}]?\d|\.\d))?[{_CURRENCY}]?"
    r"(?P<digits>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)"
    rf"(?P<exp>[eE][{_SIGNS}]?\d+|[ \t]{{0,3}}[×x*][ \t]{{0,3}}10[ \t]{{0,3}}\^[ \t]{{0,3}}[{_SIGNS}]?\d+)?"
    r"(?P<pct>[ \t]{0,3}(?:%|percent\b|per[ \t]cent\b|pct\b))?")
# what may stand right before a sign: nothing, a space, an opening bracket or a separator
_BEFORE_SIGN = set(" \t\n([{=:,;<>~≈/\"'*" + _CURRENCY)
_BEFORE_SPACED_SIGN = set("([{=:,;")  # "- 13.46": only where a value starts
_CURRENCY_WORD = re.compile(r"(?:(?<![\w])[A-Z]{3}|[" + _CURRENCY + r"])?[ \t]*$")  # "CZK (8,182.15)", not "one (1)"


@dataclass(frozen=True)
class Num:
    """A number from an answer; `percent` when it was written with a % sign."""

    value: float | None
    percent: bool = False


@dataclass(frozen=True)
class Span:
    """A number and where it stands in the text it was read from."""

    start: int
    end: int
    num: Num


def number_spans(text: str, limit: int | None = None) -> list[Span]:
    """Every number written with digits in a text (the first `limit` of them), with its place: "1,234.5", "–3",
    "(8,182.15) CZK", "84.4 %"."""
    out: list[Span] = []
    for m in _NUMBER.finditer(text):
        if limit is not None and len(out) >= limit:
            break
        digits = m.group("digits").replace(",", "")
        exp = m.group("exp") or ""
        if exp:
            power = exp.translate(_ASCII_MINUS).replace(" ", "").replace("\t", "")
            exp = "e" + re.split(r"[eE^]", power)[-1]
        value = float(digits + exp)
        start = m.start()
        if m.group("sign"):
            sign = m.group("sign")[0]  # the group holds the space after the sign too
            if _is_sign(text, m.start(), bool(m.group("gap")), sign):
                value = value if sign == "+" else -value
            else:
                start = m.start("digits")
        elif _accounting(text, start, m.end()):
            value = -value
        out.append(Span(start, m.end(), Num(value + 0.0, bool(m.group("pct")))))
    return out


_ASCII_MINUS = str.maketrans({c: "-" for c in MINUS})


_LOOK = 24  # characters looked at around a number: a bounded window keeps a 1 MB text linear


def _is_sign(text: str, at: int, spaced: bool, sign: str) -> bool:
    before = text[max(0, at - _LOOK):at].rstrip(" \t")
    if at and text[at - 1] not in _BEFORE_SIGN:
        return False  # glued to a word or a number: "top-10", "1993-2018"
    if before and (before[-1].isdigit() or before[-1] in ")]}%"):
        return False  # after a number: a range or a difference, "1993 - 2018"
    # a dash then a space after a word is punctuation ("the answer – 13.46"); U+2212 is a minus wherever it stands
    return not spaced or not before or before[-1] in _BEFORE_SPACED_SIGN or sign in "\u2212\u2796"


def _accounting(text: str, start: int, end: int) -> bool:
    """Whether the number at text[start:end] is an accounting negative: "(13.46)", "CZK (8,182.15)", "x: (1.5)".
    A bracket in prose restates a number ("sixty (60) days"): only a value standing alone is negative."""
    before, after = text[max(0, start - _LOOK):start].rstrip(" \t"), text[end:end + _LOOK].lstrip(" \t")
    if not (before.endswith("(") and after.startswith(")")):
        return False
    lead = _CURRENCY_WORD.sub("", before[:-1]).rstrip(" \t")
    return not lead or lead[-1] in ":="


def numbers_in(text: str, limit: int | None = None) -> list[Num]:
    """Every number written with digits in a text ("1,234.5", "–3", "(13.46)", "84.4 %"), fullwidth digits too;
    the first `limit` of them (two tell that a value holds more than one)."""
    return [s.num for s in number_spans(unicodedata.normalize("NFKC", text), limit)]


def to_number(x: Any, what: str) -> Num:
    """A JSON value read as a number (None stays None); a string must hold exactly one number."""
    if x is None:
        return Num(None)
    if isinstance(x, bool):
        raise Wrong(f"{what}: expected a number, got {json.dumps(x)}")
    if isinstance(x, int | float):
        try:
            value = float(x)
        except OverflowError:
            value = math.inf
        if math.isnan(value) or math.isinf(value):
            raise Wrong(f"{what}: {value} is not a number")
        return Num(value)
    if isinstance(x, str):
        if x.strip().lower() in ("null", "none"):
            return Num(None)
        found = numbers_in(x, 2)
        if len(found) != 1:
            raise Wrong(f"{what}: expected one number, got {short(x)}", HEDGED if found else MALFORMED)
        if math.isinf(found[0].value):
            raise Wrong(f"{what}: {found[0].value} is not a number")
        return found[0]
    if isinstance(x, list) and len(x) > 1:
        raise Wrong(f"{what}: expected one number, got a list of {len(x)}: {short(x)}", HEDGED)
    raise Wrong(f"{what}: expected a number, got {short(x)}")


def allowed_error(gold: float, tolerance: dict) -> float:
    """The largest difference accepted: max(abs_tol, rel_tol·|gold|)."""
    return max(float(tolerance.get("abs_tol", 0.0)), float(tolerance.get("rel_tol", 0.0)) * abs(gold))


def check_number(answer: Any, gold: float | None, tolerance: dict, what: str, scale: str | None = None) -> None:
    """Raise Wrong unless the answer matches the gold number.

    `scale` is None for plain numbers, "fraction" for shares stored 0–1, "points" for 0–100 values.
    """
    num = to_number(answer, what)
    if gold is None or num.value is None:
        if gold is None and num.value is None:
            return
        raise Wrong(f"{what}: {fmt(num.value)} is not {fmt(gold)}", VALUE)
    a = num.value
    if scale == "fraction":
        candidates = [a / 100] if num.percent else [a, a / 100]
    elif scale == "points":
        candidates = [a] if num.percent else [a, a * 100]
    else:
        candidates = [a]
    limit = allowed_error(gold, tolerance)
    if any(abs(c - gold) <= limit for c in candidates):
        return
    raise Wrong(f"{what}: {fmt(a)}{'%' if num.percent else ''} is not {fmt(gold)} (tolerance ±{limit:.3g})", VALUE)
