"""Answers: a typed comparison of one answer with its task's gold (DESIGN §4), shared by the scorer and generate.

`dptool.evaluate.score` scores a run with it; `dptool.generate.validate` uses it to reject a rule task whose
base answer would already pass.

Answers are JSON values or text. Text is parsed as JSON, else the content of its last
<answer>…</answer>, else the first JSON object or array inside it; a "value" task also takes a text
holding exactly one number. Comparisons are typed by `answer_format.type`:

- numbers match when |answer − gold| ≤ max(abs_tol, rel_tol·|gold|), with the task's tolerance;
  signs count and NULL (None) equals only NULL;
- a "percent" format stores gold shares as fractions (0.25); the answer may be 0.25 or 25, and
  "25%" means 0.25; fields named `*_pct` hold percentage points (32.1) and take 32.1 or 0.321;
- rows are aligned by their group key (case-, accent- and space-insensitive), never by sorting each
  column on its own; a ranking's order counts; a duplicate row is wrong, and a key twice in any JSON
  object of the answer makes it malformed (json's last-wins would pick one of two claims);
- a p-value matches within 0.01 and the significance verdict must agree;
- an answer gives one verdict and one value per field: a second verdict-like field ({"result": "FAIL",
  "verdict": "PASS"}), two periods, two numbers or a list where one is asked is a hedge, and wrong;
- a knowledge answer must contain every key fact; numbers in facts are compared as numbers
  ("60 days" ~ "sixty (60) days" ~ "60-day") and dates in any common format. It must also be precise:
  at most max(150, 3 × the passage's) words, at most as many numbers and dates foreign to the gold
  passage and question as it has from them (two are always allowed), no "30 or 45" where one of the two
  is foreign, and one date where the task asks for a date.

A malformed answer (unparseable, wrong shape, over 1 MB) is wrong with a reason; it never raises.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from datetime import date
from typing import Any

MAX_ANSWER_BYTES = 1_000_000
DEFAULT_TOLERANCE = {"rel_tol": 0.001, "abs_tol": 1e-6}
P_VALUE_TOLERANCE = 0.01
MAX_JSON_STARTS = 50  # JSON objects tried inside one text: bounds the work on a hostile answer


@dataclass(frozen=True)
class Verdict:
    """Whether an answer matches, and why not (empty when it does)."""

    correct: bool
    reason: str = ""
    kind: str = ""  # one of NO_ANSWER, MALFORMED, HEDGED, VALUE, VERDICT, ROWS, FACT when wrong


NO_ANSWER, MALFORMED, HEDGED, VALUE, VERDICT, ROWS, FACT = (
    "no answer", "malformed answer", "hedged answer", "wrong value", "wrong verdict", "wrong rows",
    "missing key fact")


class Wrong(Exception):
    """The answer does not match its gold; the message says why, in one line, and `kind` sums it up."""

    def __init__(self, message: str, kind: str = MALFORMED):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Malformed:
    """An answer that an answers file holds in a form no comparison may read (its record has "answer" twice)."""

    reason: str


@dataclass(frozen=True)
class Text:
    """An answer that holds no JSON: free text."""

    text: str


# ---------------------------------------------------------------------------------------------------
# parsing


class _DuplicateKey(ValueError):
    pass


def _repeated(pairs: list[tuple[str, Any]]) -> list[str]:
    return [k for k, n in Counter(k for k, _ in pairs).items() if n > 1]


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict:
    # json.loads keeps the last of two equal keys: a duplicated group would vanish unseen
    keys = _repeated(pairs)
    if keys:
        raise _DuplicateKey(f"duplicate key {keys[0]!r} in a JSON object")
    return dict(pairs)


class DuplicateKeys(dict):
    """A JSON object read from an answers file that had a key twice; an answer holding one is malformed."""

    def __init__(self, pairs: list[tuple[str, Any]], keys: list[str]):
        super().__init__(pairs)
        self.keys_twice = tuple(keys)


def _marked_pairs(pairs: list[tuple[str, Any]]) -> dict:
    keys = _repeated(pairs)
    return DuplicateKeys(pairs, keys) if keys else dict(pairs)


MAX_INT_DIGITS = 4000  # Python refuses to convert an integer of more than 4,300 digits


def _int(text: str) -> int | float:
    # a longer integer is a float (inf), which no comparison accepts, instead of a ValueError
    return int(text) if len(text.lstrip("-")) <= MAX_INT_DIGITS else float(text)


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs, parse_int=_int)
_RECORD_DECODER = json.JSONDecoder(object_pairs_hook=_marked_pairs, parse_int=_int)


def read_json(text: str) -> Any:
    """A JSON value as json.loads reads it, but an object with a key twice is a DuplicateKeys and an integer
    too long for Python is a float; raises ValueError (or RecursionError) when the text is not JSON."""
    value, end = _RECORD_DECODER.raw_decode(text.strip())
    if text.strip()[end:]:
        raise ValueError("extra data after JSON")
    return value


def repeated_key(value: Any) -> str | None:
    """The first key that appears twice in one object anywhere inside a value read by read_json, or None."""
    stack = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, DuplicateKeys):
            return x.keys_twice[0]
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return None
_ANSWER_TAG = re.compile(r"<answer>(.*?)(?:</answer>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.DOTALL)


def _loads(text: str) -> Any:
    value, end = _DECODER.raw_decode(text)
    if text[end:].strip():
        raise ValueError("extra data after JSON")
    return value


def parse_answer(answer: Any, *, embedded: bool = True) -> Any:
    """The answer as a JSON value, or `Text` when it holds none. Raises Wrong when it is too large.

    `embedded`: look for a JSON object or array inside prose (not for knowledge answers, which are prose).
    """
    if isinstance(answer, str):
        if len(answer.encode("utf-8", "replace")) > MAX_ANSWER_BYTES:
            raise Wrong(f"answer larger than {MAX_ANSWER_BYTES // 1_000_000} MB")
        return _parse_text(answer, embedded)
    try:
        size = len(json.dumps(answer))
    except (TypeError, ValueError, RecursionError):
        raise Wrong("answer is not a JSON value") from None
    if size > MAX_ANSWER_BYTES:
        raise Wrong(f"answer larger than {MAX_ANSWER_BYTES // 1_000_000} MB")
    key = repeated_key(answer)
    if key is not None:
        raise Wrong(f"malformed answer: duplicate key {key!r} in a JSON object")
    return answer


def _parse_text(text: str, embedded: bool) -> Any:
    tags = _ANSWER_TAG.findall(text)
    text = (tags[-1] if tags else text).strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return _loads(text)
    except _DuplicateKey as exc:
        raise Wrong(f"malformed answer: {exc}") from None
    except (ValueError, RecursionError):
        pass
    starts = [m.start() for m in re.finditer(r"[\[{]", text)][:MAX_JSON_STARTS] if embedded else []
    for start in starts:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except _DuplicateKey as exc:
            raise Wrong(f"malformed answer: {exc}") from None
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict | list):
            return value
    return Text(text)


_NUMBER = re.compile(r"(?<![\w.])(?:[-+\u2212](?=\d))?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(\s*%)?")


@dataclass(frozen=True)
class Num:
    """A number from an answer; `percent` when it was written with a % sign."""

    value: float | None
    percent: bool = False


def numbers_in(text: str) -> list[Num]:
    """Every number written with digits in a text ("1,234.5", "-3", "84.4 %")."""
    out = []
    for m in _NUMBER.finditer(text):
        raw = m.group(0).replace(",", "").replace("\u2212", "-").rstrip("% \t")
        out.append(Num(float(raw), bool(m.group(1))))
    return out


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
        found = numbers_in(x)
        if len(found) != 1:
            raise Wrong(f"{what}: expected one number, got {_short(x)}", HEDGED if found else MALFORMED)
        return found[0]
    if isinstance(x, list) and len(x) > 1:
        raise Wrong(f"{what}: expected one number, got a list of {len(x)}: {_short(x)}", HEDGED)
    raise Wrong(f"{what}: expected a number, got {_short(x)}")


def _short(x: Any) -> str:
    text = x if isinstance(x, str) else json.dumps(x, sort_keys=True, default=str)
    return repr(text[:60] + ("…" if len(text) > 60 else ""))


# ---------------------------------------------------------------------------------------------------
# numbers and keys


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
        raise Wrong(f"{what}: {_fmt(num.value)} is not {_fmt(gold)}", VALUE)
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
    raise Wrong(f"{what}: {_fmt(a)}{'%' if num.percent else ''} is not {_fmt(gold)} (tolerance ±{limit:.3g})", VALUE)


def _fmt(x: float | None) -> str:
    return "NULL" if x is None else f"{x:.10g}"


def _fold(x: Any) -> str | None:
    if x is None:
        return None
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    text = unicodedata.normalize("NFKD", str(x))
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return " ".join(text.casefold().split())


class Keys:
    """Group keys compared case-, accent- and space-insensitively, unless that would merge gold keys."""

    def __init__(self, gold_keys: list[Any]):
        folded = [_fold(k) for k in gold_keys]
        self.exact = len(set(folded)) < len(folded) and len({_exact(k) for k in gold_keys}) == len(gold_keys)

    def __call__(self, key: Any) -> str | None:
        return _exact(key) if self.exact else _fold(key)


def _exact(x: Any) -> str | None:
    return None if x is None else str(x)


def _show(key: Any) -> str:
    return "NULL" if key is None else str(key)


# ---------------------------------------------------------------------------------------------------
# the typed comparators


def _percent_scale(fmt: dict) -> str | None:
    return "fraction" if fmt.get("format") == "percent" else None


def _require_dict(answer: Any, kind: str) -> dict:
    if not isinstance(answer, dict):
        raise Wrong(f"expected a JSON object for a {kind} answer, got {_kind(answer)}")
    return answer


def _kind(x: Any) -> str:
    if isinstance(x, Text):
        return f"text {_short(x.text)}"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(x), "a number")


def _field(answer: dict, name: str, *aliases: str) -> Any:
    for key in (name, *aliases):
        if key in answer:
            return answer[key]
    raise Wrong(f"missing field {name!r}")


def _value(answer: Any, gold: dict, fmt: dict, tol: dict) -> None:
    if isinstance(answer, Text):
        found = numbers_in(answer.text)
        if len(found) != 1:
            raise Wrong(f"expected one number, found {len(found)} in text {_short(answer.text)}")
        answer = f"{found[0].value!r}{'%' if found[0].percent else ''}"
    elif isinstance(answer, dict):
        if "value" in answer:
            answer = answer["value"]
        elif len(answer) == 1:  # {"csat": 0.84}: one named number
            answer = next(iter(answer.values()))
        else:
            raise Wrong("missing field 'value'")
    elif isinstance(answer, list):
        if len(answer) != 1:
            raise Wrong(f"expected one value, got an array of {len(answer)}")
        return _value(answer[0], gold, fmt, tol)
    check_number(answer, gold["value"], tol, "value", _percent_scale(fmt))


def rows_of(answer: Any, key: str) -> list[tuple[Any, Any]]:
    """(group, value) pairs from an array of rows: {key: g, "value": v}, {g: v}, [g, v]."""
    if isinstance(answer, dict):
        lists = [v for v in answer.values() if isinstance(v, list)]
        if len(answer) == 1 and len(lists) == 1:  # {"ranking": [...]}
            answer = lists[0]
    if not isinstance(answer, list):
        raise Wrong(f"expected a JSON array of rows, got {_kind(answer)}")
    rows = []
    for i, row in enumerate(answer, 1):
        if isinstance(row, dict):
            if key in row and ("value" in row or len(row) == 2):  # extra fields such as "rank" are ignored
                group = row[key]
                value = row.get("value", next((v for k, v in row.items() if k != key), None))
            elif "value" in row and len(row) == 2:
                group = next(v for k, v in row.items() if k != "value")
                value = row["value"]
            elif len(row) == 1:
                group, value = next(iter(row.items()))
            else:
                raise Wrong(f"row {i}: expected {{{key!r}: group, 'value': number}}, got {_short(row)}")
        elif isinstance(row, list) and len(row) == 2:
            group, value = row
        else:
            raise Wrong(f"row {i}: expected {{{key!r}: group, 'value': number}}, got {_short(row)}")
        if isinstance(group, dict | list):
            raise Wrong(f"row {i}: the group is not a value: {_short(group)}")
        rows.append((group, value))
    return rows


def _ranking(answer: Any, gold: list[dict], fmt: dict, tol: dict) -> None:
    key = fmt["key"]
    rows = rows_of(answer, key)
    keys = Keys([g[key] for g in gold])
    if len(rows) != len(gold):
        raise Wrong(f"expected {len(gold)} rows, got {len(rows)}", ROWS)
    for i, ((group, value), g) in enumerate(zip(rows, gold, strict=True), 1):
        if keys(group) != keys(g[key]):
            raise Wrong(f"row {i}: expected {_show(g[key])}, got {_show(group)}", ROWS)
        check_number(value, g["value"], tol, f"row {i} ({_show(g[key])})", _percent_scale(fmt))


def _breakdown(answer: Any, gold: list[dict], fmt: dict, tol: dict) -> None:
    key = fmt["key"]
    if isinstance(answer, dict) and len(answer) > 1 and not any(isinstance(v, dict | list) for v in answer.values()):
        rows = list(answer.items())  # {"SP": 1.2, "RJ": 3.4}: a set needs no order (duplicate keys are refused)
    else:
        rows = rows_of(answer, key)
    keys = Keys([g[key] for g in gold])
    counts = Counter(keys(group) for group, _ in rows)
    for group, _ in rows:  # a duplicated row is an error, never merged away
        if counts[keys(group)] > 1:
            raise Wrong(f"group {_show(group)} appears {counts[keys(group)]} times", ROWS)
    given = {keys(group): value for group, value in rows}
    expected = {keys(g[key]): g for g in gold}
    missing = [_show(g[key]) for k, g in expected.items() if k not in given]
    if missing:
        raise Wrong(f"missing groups: {', '.join(missing[:5])}", ROWS)
    extra = [_show(group) for group, _ in rows if keys(group) not in expected]
    if extra:
        raise Wrong(f"unexpected groups: {', '.join(extra[:5])}", ROWS)
    for k, g in expected.items():
        check_number(given[k], g["value"], tol, f"group {_show(g[key])}", _percent_scale(fmt))


_VERDICTS = {"pass": "PASS", "fail": "FAIL", "true": "PASS", "false": "FAIL", "yes": "PASS", "no": "FAIL"}


def _verdict(x: Any) -> str:
    if isinstance(x, bool):
        return "PASS" if x else "FAIL"
    if isinstance(x, str) and x.strip().lower() in _VERDICTS:
        return _VERDICTS[x.strip().lower()]
    raise Wrong(f"result: expected PASS or FAIL, got {_short(x)}")


# names of fields that state a verdict, and verdicts written as values: an answer states one verdict
_VERDICT_FIELDS = frozenset([
    "result", "verdict", "status", "outcome", "conclusion", "decision", "answer", "pass", "passed", "passes", "fail",
    "failed", "met", "exceeds", "significant", "is_significant", "significance", "direction", "trend", "higher",
    "lower", "winner", "loser", "higher_group", "lower_group", "larger", "smaller", "better", "worse"])
_VERDICT_VALUES = frozenset([*_VERDICTS, "increasing", "decreasing", "stable", "flat", "up", "down", "rising",
                             "falling", "significant", "not significant", "insignificant"])
# the fields each format names, besides its verdict: free to hold anything
_FIELDS = {"threshold": ("value", "threshold"), "trend": ("total_change_pct", "peak_period"),
           "comparison": ("group_a", "group_b", "value_a", "value_b"),
           "significance": ("p_value", "test_name", "group_a", "group_b", "mean_a", "mean_b")}


def _one_verdict(answer: dict, kind: str, own: tuple[str, ...], groups: Keys | None = None,
                 group_keys: tuple[Any, ...] = ()) -> None:
    """Raise Wrong (hedged) unless the answer states its verdict once: in one of its own verdict fields, with no
    other field named like a verdict, holding a verdict or (a comparison) naming one of the groups."""
    given = [k for k in own if k in answer]
    if len(given) > 1:
        raise Wrong(f"hedged answer: both {given[0]!r} and {given[1]!r} state the verdict", HEDGED)
    named = {groups(g) for g in group_keys} if groups else set()
    for key, value in answer.items():
        if key in own or key in _FIELDS[kind]:
            continue
        if _fold(key).replace(" ", "_") in _VERDICT_FIELDS:
            raise Wrong(f"hedged answer: a second verdict in {key!r}", HEDGED)
        if isinstance(value, bool) or (isinstance(value, str) and _fold(value) in _VERDICT_VALUES):
            raise Wrong(f"hedged answer: {key!r} holds a second verdict, {_short(value)}", HEDGED)
        if groups and isinstance(value, str | int | float) and groups(value) in named:
            raise Wrong(f"hedged answer: {key!r} names a group, {_short(value)}", HEDGED)


def _threshold(answer: Any, gold: dict, fmt: dict, tol: dict) -> None:
    answer = _require_dict(answer, "threshold")
    _one_verdict(answer, "threshold", ("result", "verdict"))
    result = _verdict(_field(answer, "result", "verdict"))
    if result != gold["result"]:
        raise Wrong(f"result {result}, the gold is {gold['result']}", VERDICT)
    scale = _percent_scale(fmt)
    check_number(_field(answer, "value"), gold["value"], tol, "value", scale)
    if "threshold" in answer:  # optional; a restated threshold must still be the asked one
        check_number(answer["threshold"], gold["threshold"], tol, "threshold", scale)


_MONTHS = {name: i for i, names in enumerate(
    [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
     ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"),
     ("nov", "november"), ("dec", "december")], 1) for name in names}


_PERIODS = re.compile(r"\d{4}[-/.]\d{1,2}|\b(?:" + "|".join(_MONTHS) + r")\.?,?\s+\d{4}")
_TIME = r"(?:[ t]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?"


def parse_period(x: Any) -> tuple[int, int]:
    """(year, month) of "2018-01", "2018-01-15", "2018-01-01 00:00:00", "2018/01", "Jan 2018", "January 2018".

    Raises Wrong: hedged when the value names two periods ("1993-11 or 1993-12"), malformed when none.
    """
    if isinstance(x, list) and len(x) > 1:
        raise Wrong(f"hedged answer: peak_period is a list of {len(x)} where one month is asked", HEDGED)
    text = str(x).strip().lower()
    if len(_PERIODS.findall(text)) > 1:
        raise Wrong(f"hedged answer: peak_period names more than one month, {_short(x)}", HEDGED)
    m = re.fullmatch(r"(\d{4})[-/.](\d{1,2})(?:[-/.]\d{1,2}" + _TIME + ")?", text)
    if m and 1 <= int(m.group(2)) <= 12:
        return int(m.group(1)), int(m.group(2))
    m = re.fullmatch(r"([a-z]+)\.?,?\s+(\d{4})", text)
    if m and m.group(1) in _MONTHS:
        return int(m.group(2)), _MONTHS[m.group(1)]
    raise Wrong(f"peak_period: expected a month such as 2018-01, got {_short(x)}")


def _trend(answer: Any, gold: dict, fmt: dict, tol: dict) -> None:
    answer = _require_dict(answer, "trend")
    _one_verdict(answer, "trend", ("direction",))
    direction = str(_field(answer, "direction")).strip().lower()
    if direction != gold["direction"]:
        raise Wrong(f"direction {direction}, the gold is {gold['direction']}", VERDICT)
    check_number(_field(answer, "total_change_pct"), gold["total_change_pct"], tol, "total_change_pct", "points")
    if parse_period(_field(answer, "peak_period")) != parse_period(gold["peak_period"]):
        raise Wrong(f"peak_period {_short(answer['peak_period'])}, the gold is {gold['peak_period']}", VERDICT)


def _comparison(answer: Any, gold: dict, fmt: dict, tol: dict) -> None:
    answer = _require_dict(answer, "comparison")
    keys = Keys([gold["group_a"], gold["group_b"]])
    _one_verdict(answer, "comparison", ("higher",), keys, (gold["group_a"], gold["group_b"]))
    given = {}
    for side in ("a", "b"):  # aligned by group: naming the two groups in the other order is fine
        group = _field(answer, f"group_{side}")
        if keys(group) in given:
            raise Wrong(f"group {_show(group)} named twice")
        given[keys(group)] = _field(answer, f"value_{side}")
    for side in ("a", "b"):
        group = gold[f"group_{side}"]
        if keys(group) not in given:
            raise Wrong(f"missing group {_show(group)}", ROWS)
        check_number(given[keys(group)], gold[f"value_{side}"], tol, f"value of {_show(group)}",
                     _percent_scale(fmt))
    higher = _field(answer, "higher")
    if keys(higher) != keys(gold["higher"]):
        raise Wrong(f"higher {_show(higher)}, the gold is {_show(gold['higher'])}", VERDICT)


def _boolean(x: Any, what: str) -> bool:
    if isinstance(x, bool):
        return x
    if isinstance(x, str) and x.strip().lower() in ("true", "yes", "false", "no"):
        return x.strip().lower() in ("true", "yes")
    raise Wrong(f"{what}: expected true or false, got {_short(x)}")


def _significance(answer: Any, gold: dict, fmt: dict, tol: dict) -> None:
    answer = _require_dict(answer, "significance")
    _one_verdict(answer, "significance", ("significant",))
    significant = _boolean(_field(answer, "significant"), "significant")
    if significant != gold["significant"]:
        raise Wrong(f"significant {json.dumps(significant)}, the gold is {json.dumps(gold['significant'])}", VERDICT)
    check_number(_field(answer, "p_value"), gold["p_value"], {"abs_tol": P_VALUE_TOLERANCE}, "p_value")


# ---- knowledge: key facts ------------------------------------------------------------------------

_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
          "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = {w: 10 * i for i, w in enumerate(
    ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]) if w}
_NUMBER_WORDS = {**{w: i for i, w in enumerate(_UNITS)}, **_TENS, "hundred": 100, "thousand": 1000}
_STOPWORDS = frozenset(["a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "with", "and", "or",
                        "is", "are", "was", "were", "be", "been", "being", "as", "that", "this", "these", "those",
                        "it", "its", "than", "then", "which", "who", "whom", "into", "per", "our", "their"])
# the order of year (y), month number (m), month name (M), day (d); "xxy" is 01/02/2018, read both ways
_DATE_PATTERNS = [
    (re.compile(r"\b(\d{4})[-/](\d{1,2})[-/](\d{1,2})\b"), "ymd"),
    (re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+([a-z]+)\.?,?\s+(\d{4})\b"), "dMy"),
    (re.compile(r"\b([a-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b"), "Mdy"),
    (re.compile(r"\b(\d{1,2})[/.](\d{1,2})[/.](\d{4})\b"), "xxy"),
]
_MONTH_PATTERNS = [
    (re.compile(r"\b([a-z]+)\.?,?\s+(\d{4})\b"), "My"),
    (re.compile(r"\b(\d{4})-(\d{1,2})\b"), "ym"),
]


def _month(groups: tuple[str, ...], order: str) -> int | None:
    if "M" in order:
        return _MONTHS.get(groups[order.index("M")])
    month = int(groups[order.index("m")])
    return month if 1 <= month <= 12 else None


def _days_of(groups: tuple[str, ...], order: str) -> set[date]:
    year = int(groups[order.index("y")])
    if order == "xxy":
        a, b = int(groups[0]), int(groups[1])
        pairs = {(b, a), (a, b)}
    else:
        pairs = {(_month(groups, order), int(groups[order.index("d")]))}
    found = set()
    for month, day in pairs:
        with contextlib.suppress(TypeError, ValueError):  # no such month or day: not a date
            found.add(date(year, month, day))
    return found


def _date_spans(text: str) -> tuple[list[tuple[int, int, frozenset]], str]:
    """Where dates and months stand in a text, each with the days (or months) it may mean ("01/02/2018" two),
    and the text with them blanked out."""
    spans = []
    for pattern, order in _DATE_PATTERNS + _MONTH_PATTERNS:
        for m in list(pattern.finditer(text)):
            if len(order) == 3:
                found: set = _days_of(m.groups(), order)
            else:
                month = _month(m.groups(), order)
                found = {(int(m.groups()[order.index("y")]), month)} if month else set()
            if found:  # blanked, not cut: the positions of later matches stay valid
                spans.append((m.start(), m.end(), frozenset(found)))
                text = text[:m.start()] + " " * (m.end() - m.start()) + text[m.end():]
    return spans, text


def _dates(text: str) -> tuple[set[date], set[tuple[int, int]], str]:
    """Dates and months written in a text, and the text with them blanked out."""
    spans, text = _date_spans(text)
    points = {p for _, _, found in spans for p in found}
    days = {p for p in points if isinstance(p, date)}
    return days, (points - days) | {(d.year, d.month) for d in days}, text


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+|\d+(?:\.\d+)?", text)


def _word_numbers(tokens: list[str]) -> list[float]:
    """Numbers spelled out in words: "sixty" 60, "twenty-four" 24, "one hundred" 100."""
    out, total, current, inside = [], 0, 0, False
    for t in [*tokens, ""]:
        if t in _NUMBER_WORDS:
            n = _NUMBER_WORDS[t]
            if n == 100:
                current = max(current, 1) * 100
            elif n == 1000:
                total, current = total + max(current, 1) * 1000, 0
            else:
                current += n
            inside = True
        elif inside:
            out.append(float(total + current))
            total, current, inside = 0, 0, False
    return out


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _same_word(a: str, b: str) -> bool:
    short, long = sorted((a, b), key=len)
    return a == b or (len(short) >= 4 and long.startswith(short))


@dataclass
class _Facts:
    days: set[date]
    months: set[tuple[int, int]]
    numbers: list[float]
    words: set[str]


def _index(text: str) -> _Facts:
    text = _fold(text) or ""
    days, months, rest = _dates(text)
    tokens = _words(rest)
    numbers = [n.value for n in numbers_in(rest)] + _word_numbers(tokens)
    for d in days:  # "2018" in a fact is found in "1 January 2018"
        numbers += [float(d.year), float(d.day), float(d.month)]
    numbers += [float(y) for y, _ in months]
    words = {_stem(t) for t in tokens if t.isalpha() and t not in _NUMBER_WORDS and t not in _STOPWORDS}
    return _Facts(days, months, numbers, words)


def missing_fact(fact: str, answer_text: str) -> str | None:
    """The first part of a key fact the answer does not contain, or None when it holds the fact."""
    have, need = _index(answer_text), _index(fact)
    for d in sorted(need.days):
        if d not in have.days:
            return d.isoformat()
    for y, m in sorted(need.months - {(d.year, d.month) for d in need.days}):
        if (y, m) not in have.months:
            return f"{y}-{m:02d}"
    for n in need.numbers:
        if not any(math.isclose(n, h, rel_tol=1e-9, abs_tol=1e-9) for h in have.numbers):
            return _fmt(n)
    for w in sorted(need.words):
        if not any(_same_word(w, h) for h in have.words):
            return w
    return None


def _flatten(x: Any) -> str:
    if isinstance(x, dict):
        return " ; ".join(f"{k}: {_flatten(v)}" for k, v in x.items())
    if isinstance(x, list):
        return " ; ".join(_flatten(v) for v in x)
    return "" if x is None else str(x)


# precision of a knowledge answer: what it may add to the gold passage (README, "How answers are compared")
KNOWLEDGE_MIN_WORDS = 150
KNOWLEDGE_WORDS_PER_PASSAGE_WORD = 3
FOREIGN_ALLOWED = 2  # numbers or dates foreign to the passage that any answer may hold ("version 2.0")
EFFECTIVE_DATE = "effective_date"  # answer_format.asks of a date task (dptool.generate.knowledge writes it)
_MARKERS = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?\d+[.)][ \t]+|\[\d+\]", re.MULTILINE)  # "1. …", "[2]"
# what stands between two alternatives: "30 or 45", "30 days (or 45", "0.4 × csat (or 0.7", "30,000 czk or else 25,000"
_OR = re.compile(r"[^\d]{0,24}?(?<![a-z])or(?:\s+(?:else|maybe|perhaps|possibly|rather))?[\s(]*")


@dataclass(frozen=True)
class _Claim:
    """A date, month or number an answer states, where it stands, and what it may mean."""

    start: int
    end: int
    means: frozenset  # dates, (year, month) pairs or floats: "01/02/2018" may mean two days


def _claims(text: str) -> tuple[list[_Claim], str]:
    """The dates, months and numbers a text states, in order, and the text they stand in (numbered-list
    markers and citation marks are no claims, nor are the parts of a date)."""
    folded = _MARKERS.sub(lambda m: " " * len(m.group(0)), _fold(text) or "")
    spans, rest = _date_spans(folded)
    claims = [_Claim(a, b, found) for a, b, found in spans]
    claims += [_Claim(m.start(), m.end(), frozenset({n.value})) for m, n in
               ((m, numbers_in(m.group(0))[0]) for m in _NUMBER.finditer(rest))]
    claims += [_Claim(-1, -1, frozenset({n})) for n in _word_numbers(_words(rest))]  # "sixty": no place needed
    return sorted(claims, key=lambda c: c.start), folded


def _in(x: Any, source: _Facts) -> bool:
    if isinstance(x, date):
        return x in source.days
    if isinstance(x, tuple):
        return x in source.months
    # a share may be written as a fraction or in percent
    return any(math.isclose(x, a * f, rel_tol=1e-9, abs_tol=1e-9) for a in source.numbers for f in (1, 100, 0.01))


def _show_claim(claim: _Claim) -> str:
    x = min(claim.means, key=str)
    return x.isoformat() if isinstance(x, date) else f"{x[0]}-{x[1]:02d}" if isinstance(x, tuple) else _fmt(x)


def _alternatives(claims: list[_Claim], text: str) -> list[tuple[_Claim, _Claim]]:
    """Pairs of claims offered as alternatives: "30 or 45 days", "1 July 2016 (or 1 January 2017)"."""
    placed = [c for c in claims if c.start >= 0]
    return [(a, b) for a, b in zip(placed, placed[1:], strict=False) if _OR.fullmatch(text[a.end:b.start])]


def _precise(text: str, gold: dict, fmt: dict, question: str) -> None:
    """Raise Wrong (hedged) when a knowledge answer says more than its gold passage supports: more foreign
    numbers and dates than supported ones, a foreign date where a date is asked, or "30 or 45" where only
    one of the two is a key fact."""
    passage = gold.get("passage") or ""
    facts = gold.get("facts") or []
    source = _index("\n".join([passage, question, *facts]))
    claims, folded = _claims(text)
    distinct = {c.means: c for c in claims}.values()
    supported = [c for c in distinct if any(_in(x, source) for x in c.means)]
    foreign = [_show_claim(c) for c in distinct if c not in supported]
    if fmt.get("asks") == EFFECTIVE_DATE:
        dates = [c for c in distinct if c not in supported and not isinstance(next(iter(c.means)), float)]
        if dates:
            raise Wrong(f"hedged answer: the date {_show_claim(dates[0])} is not in the governing passage", HEDGED)
    if len(foreign) > max(FOREIGN_ALLOWED, len(supported)):
        raise Wrong(f"hedged answer: {len(foreign)} numbers or dates not in the governing passage "
                    f"({', '.join(foreign[:3])}, …), {len(supported)} from it", HEDGED)
    stated_facts = [x for c in _claims(" ; ".join(facts))[0] for x in c.means]  # not a date's parts, unlike _index
    key = _Facts({x for x in stated_facts if isinstance(x, date)}, {x for x in stated_facts if isinstance(x, tuple)},
                 [x for x in stated_facts if isinstance(x, float)], set())
    passage_claims, passage_text = _claims(passage)
    stated = {(a.means, b.means) for a, b in _alternatives(passage_claims, passage_text)}
    for a, b in _alternatives(claims, folded):
        if (a.means, b.means) not in stated and \
                any(_in(x, key) for x in a.means) != any(_in(x, key) for x in b.means):
            raise Wrong(f"hedged answer: {folded[a.start:b.end]!r} offers an alternative to a key fact", HEDGED)


def _knowledge(answer: Any, gold: dict, fmt: dict, tol: dict, question: str = "") -> None:
    facts = gold.get("facts") or []
    if not facts:
        raise Wrong("the task records no key facts to check")
    text = answer.text if isinstance(answer, Text) else _flatten(answer)
    words = len(text.split())
    limit = max(KNOWLEDGE_MIN_WORDS, KNOWLEDGE_WORDS_PER_PASSAGE_WORD * len((gold.get("passage") or "").split()))
    if words > limit:
        raise Wrong(f"hedged answer: {words:,} words, at most {limit:,} for this passage", HEDGED)
    for fact in facts:
        part = missing_fact(fact, text)
        if part is not None:
            raise Wrong(f"missing key fact {fact!r} ({part!r} not found)", FACT)
    _precise(text, gold, fmt, question)


COMPARATORS = {"value": _value, "ranking": _ranking, "threshold": _threshold, "trend": _trend,
               "comparison": _comparison, "significance": _significance, "breakdown": _breakdown,
               "knowledge": _knowledge}


def compare(task: dict, answer: Any, *, against: str = "gold") -> Verdict:
    """Compare one answer with the task's `gold` (or `base`, the answer without rules). Never raises."""
    if answer is None:
        return Verdict(False, "no answer", NO_ANSWER)
    fmt = task.get("answer_format") or {}
    comparator = COMPARATORS.get(fmt.get("type"))
    if comparator is None:
        return Verdict(False, f"unknown answer format {fmt.get('type')!r}", MALFORMED)
    expected = task.get(against)
    if expected is None and against == "base":
        expected = task.get("gold")  # a task without rules has one answer
    if isinstance(answer, str) and not answer.strip():
        return Verdict(False, "no answer", NO_ANSWER)
    if isinstance(answer, Malformed):
        return Verdict(False, answer.reason, MALFORMED)
    try:
        parsed = parse_answer(answer, embedded=fmt["type"] != "knowledge")
        tolerance = task.get("tolerance") or DEFAULT_TOLERANCE
        if comparator is _knowledge:  # precision is judged against what the question says too
            _knowledge(parsed, expected, fmt, tolerance, str(task.get("question") or ""))
        else:
            comparator(parsed, expected, fmt, tolerance)
    except Wrong as exc:
        return Verdict(False, str(exc), exc.kind)
    except (TypeError, ValueError, KeyError, AttributeError, ArithmeticError, RecursionError) as exc:
        # an answer shape no rule above foresaw: it scores 0, the run goes on
        return Verdict(False, f"malformed answer ({type(exc).__name__}: {' '.join(str(exc).split())[:80]})",
                       MALFORMED)
    return Verdict(True)
