"""No silent drops: a metric or a rule of the catalog that ends a run with no task gets one warning saying why.

A metric can end with no task at every stage: no dimension of its tables is a column of its model (no skeleton),
no window or slice of the data fits a candidate (none made), or every candidate was dropped (its SQL failed, its
rules changed no answer, every question named an identifier...). A rule likewise, and also when its catalog-level
proof shows it changes nothing on the data. `failing_sources` in the pipeline already warns where every candidate
failed with a SQL error; these lines say the rest, with the counted reasons of the candidates' drops.
"""

from __future__ import annotations

from collections import Counter

from dptool.project.catalog import Catalog

MAX_REASONS = 3


def untasked(catalog: Catalog, tasks: list[dict], pool: list, candidates: list, dropped: dict[str, str],
             reasons: dict[str, str], already: list[str], unchanged: list[tuple[str, str]] | None = None) -> list[str]:
    """`warning:` lines for every metric and rule no SQL task computes or applies.

    `pool` are the skeletons enumerated, `candidates` every candidate tried, `dropped` (task id -> reason) and
    `reasons` (task id -> reason) why each was not kept; `already` the warnings said before (a metric or rule
    named there is not named again); `unchanged` the (rule, metric) links whose proofs change nothing.
    """
    sql_tasks = [t for t in tasks if t.get("gold_sql")]
    with_task = {m for t in sql_tasks for m in t.get("metric_ids", [])[:1]}
    applied = {r for t in sql_tasks for r in t.get("rule_ids", [])}
    said = " ".join(already)
    out = []

    def why(cs: list) -> str:
        counted = Counter(_reason(c, dropped, reasons) for c in cs)
        parts = [f"{n} × {r}" for r, n in sorted(counted.items(), key=lambda x: (-x[1], x[0]))[:MAX_REASONS]]
        more = len(counted) - MAX_REASONS
        return "; ".join(parts) + (f"; and {more} other reason{'s' if more > 1 else ''}" if more > 0 else "")

    for metric_id in sorted(catalog.metrics):
        if metric_id in with_task or f"metric {metric_id}:" in said:
            continue
        skeletons = [s for s in pool if s.metric == metric_id]
        tried = [c for c in candidates if c.metric == metric_id]
        if not skeletons:
            out.append(f"warning: metric {metric_id}: no task: no dimension of its tables is a column of its model, "
                       "so there is nothing to slice it by (declare one, or list the column among the model's)")
        elif not tried:
            out.append(f"warning: metric {metric_id}: no task: none of its {len(skeletons)} skeletons gave a "
                       "candidate (no window or slice of the data where its rules change it, or too few groups)")
        else:
            out.append(f"warning: metric {metric_id}: no task: all {len(tried)} of its candidates were dropped: "
                       f"{why(tried)}")
    proofs = Counter(r for r, _ in unchanged or [])
    for rule_id in sorted(catalog.rules):
        if rule_id in applied or f"rule {rule_id}:" in said:
            continue
        tried = [c for c in candidates if rule_id in c.skeleton.rules]
        links = len(catalog.rules[rule_id].modifies)
        if proofs[rule_id] == links:
            out.append(f"warning: rule {rule_id}: no task: its catalog-level proofs show it changes none of the "
                       "metrics it modifies on this data")
        elif not tried:
            out.append(f"warning: rule {rule_id}: no task: no candidate applies it (the probe found no window or "
                       "slice where it changes its metrics)")
        else:
            out.append(f"warning: rule {rule_id}: no task: all {len(tried)} candidates applying it were dropped: "
                       f"{why(tried)}")
    return out


def _reason(c, dropped: dict[str, str], reasons: dict[str, str]) -> str:
    text = dropped.get(c.task_id) or reasons.get(c.task_id) or "dropped"
    return " ".join(text.split())[:200]
