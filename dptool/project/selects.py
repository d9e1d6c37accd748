"""Metrics whose definition selects members, and those of them that declare no window for the selection.

A metric that counts or sums over selected members (the top ten sellers, the active ones, a cohort, a buyer's first
order) has as many readings as windows the selection could be made over: the top ten over the whole history, or
picked again each month. `meta.dptool.metric.selection` states the one its model computes; a metric that visibly
selects and states none gets no task (`unwindowed`).

The cue is small on purpose, read on the metric's label, value, formula and description:
- a rank column in the value or formula (`seller_value_rank <= 10`, any `…_rank`);
- "top" followed by a number or a number word ("top 10", "Top-10", "top ten");
- the words "active", "cohort", "first", "last" or "lifetime".
A composite selects what its components select: one of them declaring the window gives it to the composite.
A metric translated from the dbt semantic layer is not read: its type states its own windows (a conversion's
window, its base events in the period asked about), and its declaration has no `selection` key.
"""

from __future__ import annotations

import re

from dptool.project.catalog import Catalog, Metric, Selection

_NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|hundred"
_RANK = re.compile(r"\b\w*_rank\b", re.IGNORECASE)
_TOP = re.compile(rf"\btop[\s-]+(?:\d+|{_NUMBER_WORDS})\b", re.IGNORECASE)
_WORDS = re.compile(r"\b(active|cohorts?|first|last|lifetime)\b", re.IGNORECASE)


def selection_cue(metric: Metric) -> str:
    """The words by which a metric visibly selects members ("top 10", "active", "seller_value_rank"), or ""."""
    code = f"{metric.value} {metric.formula}"
    if found := _RANK.search(code):
        return found.group(0)
    prose = " ".join((metric.label, metric.formula, metric.description))
    for pattern in (_TOP, _WORDS):
        if found := pattern.search(prose):
            return found.group(0)
    return ""


def selections(catalog: Catalog, metric_id: str) -> list[Selection]:
    """The selections a metric's value rests on: its own, then its components' (each once, in tree order)."""
    found = [catalog.metrics[m].selection for m in catalog.metric_tree(metric_id) if catalog.metrics[m].selection]
    return list(dict.fromkeys(found))


def unwindowed(catalog: Catalog) -> dict[str, str]:
    """metric id -> a `warning:` line for each metric that selects members (`selection_cue`) and declares no
    selection window, nor has a component that does."""
    out = {}
    for metric_id, metric in sorted(catalog.metrics.items()):
        cue = "" if metric.semantic else selection_cue(metric)
        if not cue or selections(catalog, metric_id):
            continue
        out[metric_id] = (f"warning: metric {metric_id}: no task: {metric.unique_id}: it selects members ({cue!r}) "
                          "but states no window for the selection; add meta.dptool.metric.selection: "
                          "{members: <who is picked>, window: history | period | <the window in words>}")
    return out
