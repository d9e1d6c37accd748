"""Stage 6: analysis-type answers (DI-Bench Appendix A) from the rows a gold model materialized."""

from __future__ import annotations

import math

from dptool.catalog import Metric
from dptool.instantiate import Candidate

DIGITS = 6  # answers keep six decimals: float noise below that is not part of the answer


class NotScorable(Exception):
    """The rows give no answer a scorer could check (an empty ranking, a NULL value)."""


def answer(c: Candidate, metric: Metric, columns: list[str], rows: list[tuple]) -> dict:
    """The gold and base answers, answer format and tolerance of a built candidate.

    `rows` are the gold model's rows; the `variant` column tells base from gold.
    """
    by_variant: dict[str, list[dict]] = {"base": [], "gold": []}
    for row in rows:
        record = dict(zip(columns, row, strict=True))
        by_variant[record.pop("variant")].append(record)
    fmt = {"unit": metric.unit, "format": metric.format}
    if c.analysis_type == "point_query":
        gold, base = (_single(by_variant[v]) for v in ("gold", "base"))
        return _task(gold={"value": gold}, base={"value": base}, fmt={"type": "value", **fmt}, metric=metric)
    if c.analysis_type == "ranking":
        gold = _ranking(by_variant["gold"], c.group_by[0], strict=True)
        base = _ranking(by_variant["base"], c.group_by[0], strict=False)
        return _task(gold, base, {"type": "ranking", "key": c.group_by[0], "k": c.k, **fmt}, metric)
    if c.analysis_type == "threshold_crossing":
        gold, base = (_single(by_variant[v]) for v in ("gold", "base"))
        threshold = threshold_between(base, gold) if c.rules else _round_threshold(gold)
        return _task(_verdict(gold, threshold), _verdict(base, threshold),
                     {"type": "threshold", "comparison": "exceeds", **fmt}, metric)
    raise ValueError(f"unknown analysis type {c.analysis_type!r}")


def _task(gold, base, fmt, metric: Metric) -> dict:
    tolerance = {"rel_tol": 0.001, "abs_tol": 0.0005 if metric.format == "percent" else 0.005}
    return {"gold": gold, "base": base, "answer_format": fmt, "tolerance": tolerance}


def _number(value) -> float:
    if value is None:
        raise NotScorable("the value is NULL")
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        raise NotScorable(f"the value is {value}")
    return round(value, DIGITS) + 0.0  # + 0.0 turns -0.0 into 0.0


def _single(records: list[dict]) -> float:
    if len(records) != 1:
        raise NotScorable(f"expected one row, got {len(records)}")
    return _number(records[0]["value"])


def _ranking(records: list[dict], key: str, strict: bool) -> list[dict]:
    if not records:
        raise NotScorable("the ranking is empty")
    ordered = [{key: r[key], "value": _number(r["value"])} for r in sorted(records, key=lambda r: r["rank"])]
    values = [r["value"] for r in ordered]
    if strict and len(set(values)) < len(values):
        raise NotScorable("tied values make the order of the ranking ambiguous")
    return ordered


def threshold_between(a: float, b: float) -> float:
    """A round number strictly between two values: the coarsest step that still separates them."""
    lo, hi = min(a, b), max(a, b)
    if lo == hi:
        raise NotScorable("base and gold agree; no threshold separates them")
    step = 10.0 ** math.floor(math.log10(hi - lo))
    for _ in range(16):
        t = round(round((lo + hi) / 2 / step) * step, 12)
        if lo < t < hi:
            return t
        step /= 10
    return (lo + hi) / 2


def _round_threshold(value: float) -> float:
    # without a rule there is no base to separate from: a round number near the value
    if value == 0:
        return 1.0
    step = 10.0 ** (math.floor(math.log10(abs(value))) - 1)
    t = round(round(value / step) * step, 12)
    return t + step if t == value else t


def _verdict(value: float, threshold: float) -> dict:
    return {"value": value, "threshold": threshold, "result": "PASS" if value > threshold else "FAIL"}
