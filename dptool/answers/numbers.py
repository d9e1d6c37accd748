"""Numbers in answers: read from JSON or text with their sign, and compared with a gold within its tolerance.

A minus is any of the dashes people and word processors write (-, ‐, ‑, ‒, –, —, −, ﹣, －), a minus then a
space at the start of a value ("- 13.46"), or an accounting bracket around a value ("(13.46)", "(8,182.15) CZK").
A dash is a sign only where a sign can stand: at the start, after a space, an opening bracket or a separator,
never after a number or glued to a word ("1993-2018", "0–29 days", "top-10" hold no negative number). The
words "minus" and "negative" before a number, a minus right after a value that ends the text ("13.46-"), and a
minus before an accounting bracket ("-(13.46)") are signs too. A magnitude after a number scales it ("1.5k",
"2.3 million", "4 bn"), "‰" is per mille, and digits grouped by a no-break or thin space, an apostrophe or an
underscore ("1 234.56", "1'234.56", "1_234.56") are one number, and so is a European number where nothing else
could be meant ("1.828.667,01", "1.828,01"; "1.234" is 1.234 and "1,234" is 1234). Not numbers: "0x1F",
"1.2.3".
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from dptool.answers.bounds import bounded
from dptool.answers.verdict import HEDGED, MALFORMED, NO_ANSWER, VALUE, Wrong, fmt, short

MINUS = "-\u2010\u2011\u2012\u2013\u2014\u2212\ufe63\uff0d\u2796"
_SIGNS = re.escape("+" + MINUS)  # escaped: "+-‐" unescaped in a class would be a range of every letter
_CURRENCY = "$€£¥₹"
_MAGNITUDES = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "mio": 1e6, "million": 1e6, "bn": 1e9,
               "billion": 1e9, "trillion": 1e12}
# every piece is bounded ({0,3} spaces, no nested repetition): one pass over a 1 MB text, no backtracking blow-up
_NUMBER = re.compile(
    rf"(?<![\w.])(?P<sign>[{_SIGNS}](?P<gap>[ \t]?)(?=[{_CURRENCY}]?\d|\.\d))?[{_CURRENCY}]?"
    r"(?P<digits>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)"
    r"(?!\.\d)"  # "1.2.3" is no number
    rf"(?P<exp>[eE][{_SIGNS}]?\d+|[ \t]{{0,3}}[×x*·⋅][ \t]{{0,3}}10[ \t]{{0,3}}\^[ \t]{{0,3}}[{_SIGNS}]?\d+)?"
    r"(?P<mag>(?:[kKM]|bn|mn)(?!\w)|[ \t](?:k|K|M|bn|mn|mio)(?!\w)|"  # "Kč" is no thousand
    r"[ \t]{1,3}(?:thousand|million|billion|trillion)\b)?"
    r"(?P<pct>[ \t]{0,3}(?:%|‰|percent\b|per[ \t]cent\b|pct\b|per[ \t]?mille\b))?")
# a word that is a minus before a number ("minus 13.46", "negative 13.46"), not after one ("50 minus 13.46")
_WORD_MINUS = re.compile(r"(?P<before>[^ \t]?)[ \t]*\b(?:minus|negative)[ \t]+$", re.IGNORECASE)
# what may follow a minus written after a value, at the end of the text: "13.46-", "(13.46-)."
_TRAILING_MINUS_END = re.compile(r"[ \t\n.;,)\]\"']*")
# digits grouped by a no-break, figure, thin or narrow space, an apostrophe or an underscore: "1 234 567.89"
_GROUPING = re.compile(r"(?<=\d)[\u00a0\u2007\u2009\u202f'\u2019_](?=\d{3}(?!\d))")
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_POWER = re.compile(r"10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)")
# a value offered with a plus-or-minus: "±13.46", "+/-13.46", "+-13.46" name two values
PLUS_MINUS = re.compile(r"(?:[±∓]|\+[ \t]?/[ \t]?[-\u2212]|[-\u2212][ \t]?/[ \t]?\+|\+[-\u2212]|[-\u2212]\+)"
                        r"[ \t]?[$€£¥₹]?\.?\d")
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
        if m.group("digits") == "0" and re.match(r"[xX][0-9A-Fa-f]", text[m.end("digits"):m.end("digits") + 2]):
            continue  # "0x1F" is no number
        value = float(digits + exp)
        mag = (m.group("mag") or "").strip()
        if mag:
            value *= _MAGNITUDES[mag.lower()]
        if "‰" in (m.group("pct") or "") or "mille" in (m.group("pct") or ""):
            value /= 1000
        start = m.start()
        if m.group("sign"):
            sign = m.group("sign")[0]  # the group holds the space after the sign too
            if _is_sign(text, m.start(), bool(m.group("gap")), sign):
                value = value if sign == "+" else -value
            else:
                start = m.start("digits")
        elif _accounting(text, start, m.end()) or _word_minus(text, start) or _trailing_minus(text, m.end()):
            value = -value
        pct = m.group("pct") or ""
        out.append(Span(start, m.end(), Num(value + 0.0, bool(pct) and "‰" not in pct and "mille" not in pct)))
    return out


_ASCII_MINUS = str.maketrans({c: "-" for c in MINUS})


def _word_minus(text: str, start: int) -> bool:
    """ "minus 13.46", "negative 13.46": a sign, unless it follows a number ("50 minus 13.46" is a difference)."""
    m = _WORD_MINUS.search(text[max(0, start - _LOOK):start])
    return m is not None and not (m.group("before") and (m.group("before").isdigit() or m.group("before") in "%)]}"))


def _trailing_minus(text: str, end: int) -> bool:
    """A minus right after the value that ends the text: "13.46-" (SAP and some ledgers write negatives so); "1- or
    2-star" goes on, and is no sign."""
    return end < len(text) and text[end] in MINUS and _TRAILING_MINUS_END.fullmatch(text, end + 1) is not None


# a European number where nothing else could be meant: two dot groups or more ("1.828.667"), or dot groups then
# a comma decimal ("1.828,01"); "1.234" and "1,234" stay English (1.234 and 1234)
_EUROPEAN = re.compile(r"(?<![\d.,])\d{1,3}(?:(?:\.\d{3}){2,}(?:,\d+)?|(?:\.\d{3})+,\d+)(?!\d|[.,]\d)")


def _english(m: re.Match) -> str:
    return m.group(0).replace(".", "\0").replace(",", ".").replace("\0", ",")


def prepare(text: str) -> str:
    """A text made ready for number_spans: a European number written the English way ("1.828.667,01" is
    1,828,667.01), digit groups joined by a comma ("1 234.56" is 1,234.56) and a power of ten in superscript
    written with ^ ("10⁻²" is 10^-2), before NFKC makes "1 234" two numbers and "10²" 102."""
    text = _EUROPEAN.sub(_english, text) if "." in text else text
    text = _GROUPING.sub(",", text)
    return _POWER.sub(lambda m: "10^" + m.group(1).translate(_SUPERSCRIPT), text) if "10" in text else text


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
    before = re.sub(r"\((?:[A-Z]{3}|[" + _CURRENCY + r"])[ \t]*$", "(", before)  # "(USD 13.46)"
    if not (before.endswith("(") and after.startswith(")")):
        return False
    lead = _CURRENCY_WORD.sub("", before[:-1]).rstrip(" \t")
    if lead and lead[-1] in MINUS and (len(lead) == 1 or lead[-2] in " \t(=:"):
        return True  # "-(13.46)": the minus of a bracketed value
    return not lead or lead[-1] in ":="


def numbers_in(text: str, limit: int | None = None) -> list[Num]:
    """Every number written with digits in a text ("1,234.5", "–3", "(13.46)", "84.4 %"), fullwidth digits too;
    the first `limit` of them (two tell that a value holds more than one)."""
    return [s.num for s in number_spans(unicodedata.normalize("NFKC", prepare(text)), limit)]


_NOT_FINITE = frozenset(["nan", "-nan", "+nan", "inf", "-inf", "+inf", "infinity", "-infinity", "+infinity", "∞",
                         "-∞", "+∞"])


def not_finite(text: str) -> bool:
    """Whether a text is NaN or an infinity ("NaN", "-Infinity", "∞"): no answer."""
    return text.strip().lower() in _NOT_FINITE


def to_number(x: Any, what: str, *, bounds: bool = False) -> Num:
    """A JSON value read as a number (None stays None); a string must hold exactly one number, neither bounded,
    negated nor approximate ("> 52", "not 52", "about 52" are a hedge) unless `bounds` (a p-value "< 0.001").
    NaN and infinity are no answer."""
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
            raise Wrong(f"{what}: {value} is not a number", NO_ANSWER)
        return Num(value)
    if isinstance(x, str):
        if x.strip().lower() in ("null", "none"):
            return Num(None)
        if not_finite(x):
            raise Wrong(f"{what}: {short(x)} is not a number", NO_ANSWER)
        if PLUS_MINUS.search(x):
            raise Wrong(f"{what}: a value with a plus-or-minus names two, {short(x)}", HEDGED)
        text = unicodedata.normalize("NFKC", prepare(x))
        found = number_spans(text, 2)
        if len(found) != 1:
            raise Wrong(f"{what}: expected one number, got {short(x)}", HEDGED if found else MALFORMED)
        if math.isinf(found[0].num.value):
            raise Wrong(f"{what}: {found[0].num.value} is not a number", NO_ANSWER)
        bound = None if bounds else bounded(text, found[0].start, found[0].end)
        if bound:
            raise Wrong(f"hedged answer: {what} {bound!r} bounds, negates or approximates the value, it names none",
                        HEDGED)
        return found[0].num
    if isinstance(x, list) and len(x) > 1:
        raise Wrong(f"{what}: expected one number, got a list of {len(x)}: {short(x)}", HEDGED)
    raise Wrong(f"{what}: expected a number, got {short(x)}")


def allowed_error(gold: float, tolerance: dict) -> float:
    """The largest difference accepted: max(abs_tol, rel_tol·|gold|)."""
    return max(float(tolerance.get("abs_tol", 0.0)), float(tolerance.get("rel_tol", 0.0)) * abs(gold))


def _one_scale(readings: set[str], written: bool, as_percent: bool, as_fraction: bool, what: str, a: float) -> None:
    """Record the scale a bare share was read on (none when both readings hold: 0 is 0 %; a share written with its
    "%" says its own scale); refuse a second one."""
    read = None if written or as_percent == as_fraction else "percent" if as_percent else "fraction"
    if read is None:
        return
    readings.add(read)
    if len(readings) > 1:
        other = "in percent" if read == "fraction" else "as fractions"
        raise Wrong(f"{what}: {fmt(a)} is read {'as a fraction' if read == 'fraction' else 'in percent'} where the "
                    f"answer gives other values {other}: one answer, one scale", VALUE)


def check_number(answer: Any, gold: float | None, tolerance: dict, what: str, scale: str | None = None, *,
                 bounds: bool = False, readings: set[str] | None = None) -> None:
    """Raise Wrong unless the answer matches the gold number.

    `scale` is None for plain numbers, "fraction" for shares stored 0–1, "points" for 0–100 values; `bounds`: a
    bound such as "< 0.001" is read as its number. A share is read in percent ("38.37 %", "38.37") or as a
    fraction ("0.3837"); with `readings` (one set for every number of an answer), every bare number on one scale:
    an answer that gives one share as 0.96 (meaning 0.96 %) and another as 0.45 (meaning 45 %) has no one reading.
    """
    num = to_number(answer, what, bounds=bounds)
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
        if readings is not None and scale == "fraction":
            _one_scale(readings, num.percent, abs(a / 100 - gold) <= limit, abs(a - gold) <= limit, what, a)
        return
    raise Wrong(f"{what}: {fmt(a)}{'%' if num.percent else ''} is not {fmt(gold)} (tolerance ±{limit:.3g})", VALUE)
