"""How a person names what a column or an entity counts."""

from __future__ import annotations


def noun(column: str) -> str:
    """The entities a column or an entity name counts, plural: `sale_id` and `id_sale` -> "sales", `company` ->
    "companies"."""
    low = column.lower()
    stem = column[:-3] if low.endswith("_id") else column[3:] if low.startswith("id_") else column
    stem = stem.replace("_", " ").strip()
    if stem.endswith(("s", "x", "ch", "sh")):
        return stem + "es"
    if stem.endswith("y") and stem[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return stem[:-1] + "ies"
    return stem + "s"
