"""Reading an answer: JSON (an object with a key twice is malformed), the content of the last <answer>…</answer>,
a JSON object or array inside prose, or else free text."""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from dptool.answers.verdict import Wrong

MAX_ANSWER_BYTES = 1_000_000
MAX_JSON_STARTS = 50  # JSON objects tried inside one text: bounds the work on a hostile answer


@dataclass(frozen=True)
class Malformed:
    """An answer that an answers file holds in a form no comparison may read (its record has "answer" twice)."""

    reason: str


@dataclass(frozen=True)
class Text:
    """An answer that holds no JSON: free text."""

    text: str


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


def holds_non_finite(value: Any) -> bool:
    """Whether a value holds NaN or an infinity anywhere, which JSON cannot carry (json.dumps would write a bare
    NaN); without recursion."""
    stack = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, float) and not math.isfinite(x):
            return True
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list | tuple):
            stack.extend(x)
    return False


_ANSWER_TAG = re.compile(r"<answer>(.*?)(?:</answer>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE_TAG = re.compile(r"[a-zA-Z]*")


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
    if len(text) >= 6 and text.startswith("```") and text.endswith("```"):  # a regex here backtracks cubically
        text = text[3:-3]
        text = text[_FENCE_TAG.match(text).end():].strip()
    try:
        return _loads(text)
    except _DuplicateKey as exc:
        raise Wrong(f"malformed answer: {exc}") from None
    except (ValueError, RecursionError):
        pass
    starts = [m.start() for m in itertools.islice(re.finditer(r"[\[{]", text), MAX_JSON_STARTS)] if embedded else []
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
