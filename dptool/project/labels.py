"""When two labels read the same: the key a reader sees of a metric's or a dimension's label."""

from __future__ import annotations

import unicodedata


def reader_key(label: str) -> str:
    """What a reader sees of a label: compatibility forms folded (a fullwidth `Ａ` is `A`), case folded, and no
    space, punctuation (hyphens and dashes of every kind) or invisible character: "Ａctive E-mail" and
    "active email" have one key."""
    text = unicodedata.normalize("NFKC", str(label)).casefold()
    return "".join(ch for ch in text if unicodedata.category(ch)[0] not in "PZC" and not ch.isspace())
