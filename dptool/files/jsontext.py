"""JSON text as dptool writes it into files (reports, answers lines, run settings): text any UTF-8 file holds, that
any JSON reader reads, the same bytes for the same value.

Python's json writes what UTF-8 cannot encode (a lone surrogate such as "\\ud800", which JSON's own escapes let an
answers file or a model's reply carry) and what JSON does not allow (NaN, Infinity) as they are; a file written from
it is refused half-way or unreadable. Here a lone surrogate is written as its JSON escape (it reads back the same),
a number that is not finite as the string "NaN", "Infinity" or "-Infinity" (an answer that says NaN is no number),
and an answer dptool could not read (dptool.answers.Malformed, an oversized one) as the mapping of its fields.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def plain(value: Any) -> Any:
    """`value` with every float that is not finite as its name, every dataclass as the mapping of its fields, every
    tuple as a list: what json.dumps(..., allow_nan=False) writes."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else _NOT_FINITE[value]
    if isinstance(value, dict):
        return {_key(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


def _key(key: Any) -> str:
    """A mapping's key as JSON names it (json turns 1, true and null keys into text the same way)."""
    key = plain(key)
    return key if isinstance(key, str) else json.dumps(key)


def escape_surrogates(text: str) -> str:
    """`text` with each lone surrogate as its \\uXXXX escape: inside a JSON string, the same string to a reader."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)


def _indented(value: Any, levels: int, pad: str) -> str:
    if levels <= 0 or not isinstance(value, dict | list) or not value:
        return _compact(value)
    inner = pad + "  "
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_indented(v, levels - 1, inner)}"
                 for k, v in sorted(value.items())]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    return "[\n" + ",\n".join(inner + _indented(v, levels - 1, inner) for v in value) + "\n" + pad + "]"


def dumps(value: Any, *, levels: int = 0) -> str:
    """`value` as JSON text (keys sorted, non-ASCII as it is, see the module): on one line, or with its `levels`
    outer levels of objects and lists indented by two spaces and anything deeper on one line, so that a large
    answer inside a report costs its own size, not a line per number."""
    return escape_surrogates(_indented(plain(value), levels, ""))


def line(record: dict) -> str:
    """One JSONL line (with its newline)."""
    return dumps(record) + "\n"
