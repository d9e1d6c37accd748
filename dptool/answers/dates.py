"""Dates and months in answers, in the forms people write them: "1995-01-01", "1 January 1995", "the 1st of
January 1995", "January first, 1995", "01/01/1995", "1-Jan-1995"; a trend's month as "1993-01", "01/1993",
"January 1993", "1993 January" or "Jan. 1993". Texts are read folded (lower case, no accents)."""

from __future__ import annotations

import contextlib
import re
from datetime import date
from typing import Any

from dptool.answers.verdict import HEDGED, Wrong, fold, short

MONTHS = {name: i for i, names in enumerate(
    [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
     ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"),
     ("nov", "november"), ("dec", "december")], 1) for name in names}
_ORDINAL_UNITS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"]
ORDINALS = {**{w: i for i, w in enumerate(_ORDINAL_UNITS, 1)},
            **{w: i for i, w in enumerate(["tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth",
                                           "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth"], 10)},
            "thirtieth": 30,
            **{f"{tens}{sep}{w}": base + i for tens, base in (("twenty", 20), ("thirty", 30))
               for sep in ("-", " ", "") for i, w in enumerate(_ORDINAL_UNITS, 1) if base + i <= 31}}

_MONTH = r"(?P<M>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = (r"(?P<d>\d{1,2}(?:st|nd|rd|th)?|" + "|".join(sorted(ORDINALS, key=len, reverse=True)) + ")")
_YEAR = r"(?P<y>\d{4})"
# each a full date; "x" is a day or month number: 01/02/2018 is read both ways
DATE_PATTERNS = [re.compile(p) for p in (
    rf"\b{_YEAR}[-/.](?P<m>\d{{1,2}})[-/.](?P<d>\d{{1,2}})\b",
    rf"\b(?:the\s+)?{_DAY}(?:\s+of\s+|\s+|[-/])(?:the\s+month\s+of\s+)?{_MONTH}(?:,?\s+|[-/]){_YEAR}\b",
    rf"\b{_MONTH}(?:\s+the)?\s+{_DAY},?\s+{_YEAR}\b",
    rf"\b(?P<a>\d{{1,2}})[/.\-](?P<b>\d{{1,2}})[/.\-]{_YEAR}\b",
)]
MONTH_PATTERNS = [re.compile(p) for p in (
    rf"\b{_MONTH},?\s+{_YEAR}\b",
    rf"\b{_YEAR}-(?P<m>\d{{1,2}})\b",
)]
# a trend's month, the whole field: these and every full date
_PERIOD_PATTERNS = [re.compile(p) for p in (
    rf"{_YEAR}[-/.](?P<m>\d{{1,2}})",
    rf"(?P<m>\d{{1,2}})[-/.]{_YEAR}",
    rf"{_MONTH}(?:,?\s+|[-/]|,?\s+of\s+){_YEAR}",
    rf"{_YEAR}(?:\s+|[-/]){_MONTH}",
    rf"{_YEAR}m(?P<m>\d{{1,2}})",  # "1993M01" (SDMX)
    rf"{_YEAR}(?P<m>\d{{2}})",  # "199301"
)]
_TIME = re.compile(r"(?:[ t]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?")


def _day(text: str) -> int:
    return ORDINALS[text] if text in ORDINALS else int(re.match(r"\d+", text).group(0))


def days_of(m: re.Match) -> set[date]:
    """The days a date pattern's match may mean (two for 01/02/2018), none when it is no calendar day."""
    groups = m.groupdict()
    year = int(groups["y"])
    if groups.get("a"):
        a, b = int(groups["a"]), int(groups["b"])
        pairs = {(b, a), (a, b)}
    else:
        month = MONTHS[groups["M"]] if groups.get("M") else int(groups["m"])
        pairs = {(month, _day(groups["d"]))}
    found = set()
    for month, day in pairs:
        with contextlib.suppress(TypeError, ValueError):  # no such month or day: not a date
            found.add(date(year, month, day))
    return found


def month_of(m: re.Match) -> tuple[int, int] | None:
    """The (year, month) a month pattern's match means, None when the month number is no month."""
    groups = m.groupdict()
    month = MONTHS[groups["M"]] if groups.get("M") else int(groups["m"])
    return (int(groups["y"]), month) if 1 <= month <= 12 else None


def date_spans(text: str) -> tuple[list[tuple[int, int, frozenset]], str]:
    """Where dates and months stand in a folded text, each with the days (or months) it may mean ("01/02/2018"
    two), and the text with them blanked out."""
    spans = []
    for pattern in DATE_PATTERNS + MONTH_PATTERNS:
        for m in list(pattern.finditer(text)):
            found: set = days_of(m) if pattern in DATE_PATTERNS else {month_of(m)} - {None}
            if found:  # blanked, not cut: the positions of later matches stay valid
                spans.append((m.start(), m.end(), frozenset(found)))
                text = text[:m.start()] + " " * (m.end() - m.start()) + text[m.end():]
    return spans, text


def parse_period(x: Any) -> tuple[int, int]:
    """(year, month) of a trend's month: "2018-01", "2018-01-15", "2018-01-01 00:00:00", "2018/01", "01/2018",
    "Jan 2018", "January 2018", "2018 January", "1 January 2018".

    Raises Wrong: hedged when the value names two months ("1993-11 or 1993-12"), malformed when none.
    """
    if isinstance(x, list) and len(x) > 1:
        raise Wrong(f"hedged answer: peak_period is a list of {len(x)} where one month is asked", HEDGED)
    if isinstance(x, list) and x:
        x = x[0]
    text = (fold(x) or "") if isinstance(x, str | int) else ""
    if len(text) > 200:
        raise Wrong(f"peak_period: expected a month such as 2018-01, got {short(x)}")
    months = _months_named(text)
    if len(months) > 1:
        raise Wrong(f"hedged answer: peak_period names more than one month, {short(x)}", HEDGED)
    text = text.strip(" .")
    for pattern in DATE_PATTERNS:
        m = pattern.match(text)
        if m and _TIME.fullmatch(text, m.end()) is not None:
            found = {(d.year, d.month) for d in days_of(m)}
            if len(found) == 1:
                return found.pop()
    for pattern in _PERIOD_PATTERNS:
        m = pattern.match(text)
        if m and _TIME.fullmatch(text, _day_end(text, m.end())) is not None and month_of(m):
            return month_of(m)
    raise Wrong(f"peak_period: expected a month such as 2018-01, got {short(x)}")


def _day_end(text: str, end: int) -> int:
    # "2018-01-15" is a month pattern then a day: the day is read past, the time after it too
    m = re.compile(r"[-/.]\d{1,2}").match(text, end)
    return m.end() if m else end


def _months_named(text: str) -> set[tuple[int, int]]:
    spans, rest = date_spans(text)
    found = {(d.year, d.month) if isinstance(d, date) else d for _, _, means in spans for d in means}
    for pattern in _PERIOD_PATTERNS[1:2] + _PERIOD_PATTERNS[3:]:  # "01/1993", "1993 january": not in date_spans
        for m in pattern.finditer(rest):
            if month_of(m):
                found.add(month_of(m))
    return found
