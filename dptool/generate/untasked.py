"""No silent drops: a metric or a rule of the catalog that ends a run with no task gets one warning saying why.

A metric can end with no task at every stage: no dimension of its tables is a column of its model (no skeleton),
no window or slice of the data fits a candidate (none made), or every candidate was dropped (its SQL failed, its
rules changed no answer, every question named an identifier...). A rule likewise, and also when its catalog-level
proof shows it changes nothing on the data. `failing_sources` in the pipeline already warns where every candidate
failed with a SQL error; these lines say the rest, with the counted reasons of the candidates' drops.
"""

from __future__ import annotations

from collections import Counter
from math import ceil

from dptool.generate.minimum import SUPPORT_MARGIN, VAR, Setting
from dptool.project.catalog import Catalog

MAX_REASONS = 3


def untasked(catalog: Catalog, tasks: list[dict], pool: list, candidates: list, dropped: dict[str, str],
             reasons: dict[str, str], already: list[str], unchanged: list[tuple[str, str]] | None = None,
             minimum: Setting | None = None) -> list[str]:
    """`warning:` lines for every metric and rule no SQL task computes or applies.

    `pool` are the skeletons enumerated, `candidates` every candidate tried, `dropped` (task id -> reason) and
    `reasons` (task id -> reason) why each was not kept; `already` the warnings said before (a metric or rule
    named there is not named again); `unchanged` the (rule, metric) links whose proofs change nothing; `minimum`
    the minimum support in force, which a line whose candidates rested on fewer names as the setting to change.
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
        thin = any("thin_support" in r for r in counted)
        return "; ".join(parts) + (f"; and {more} other reason{'s' if more > 1 else ''}" if more > 0 else "") + \
            (f"; {setting_hint(minimum or Setting())}" if thin else "")

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


def setting_hint(minimum: Setting) -> str:
    """What changes a drop for thin support: the var, as it is now."""
    return (f"to keep those of thin_support: lower `rows`, `entities` or `events`, or set `entity`, of the dbt var "
            f"{VAR} {minimum.var_text()} in the vars of dbt_project.yml")


def absent_types(catalog: Catalog, tasks: list[dict], types: tuple[str, ...], candidates: list,
                 dropped: dict[str, str], reasons: dict[str, str], profiles: dict, minimum: Setting) -> list[str]:
    """`warning:` lines, one per analysis type of `types` the run made no task of, saying why: what the project
    lacks for it (no average for a test, too few rows a month for a trend, no rule for a counterfactual) or why
    its candidates were dropped."""
    from dptool.generate.instantiate import _is_avg

    have = {t["analysis_type"] for t in tasks}
    leaves = [m for m in catalog.metrics.values() if not m.components]
    need = ceil(SUPPORT_MARGIN * minimum.rows)
    out = []
    for kind in types:
        if kind in have:
            continue
        tried = [c for c in candidates if c.analysis_type == kind]
        why = ""
        if kind == "significance_testing" and not any(_is_avg(m.value) for m in catalog.metrics.values()):
            why = "no metric is an average of one measure, avg(…) (a test compares the means of two groups)"
        elif kind == "counterfactual" and not catalog.rules:
            why = "no business rule (a counterfactual withdraws one)"
        elif kind == "trend_analysis":
            dated = [m for m in leaves if m.period]
            busiest = max((n for m in dated for *_, n in getattr(profiles.get(m.period), "months", [])), default=0)
            if not dated:
                why = "no metric has a date to follow month by month"
            elif busiest < need:
                why = (f"fewer than {need} rows a month (the busiest month holds {busiest}; each month of a trend "
                       f"rests on at least {minimum.rows}, with a margin for the rows rules exclude): lower `rows` "
                       f"of the dbt var {VAR} in dbt_project.yml, now {minimum.var_text()}")
        if not why and not tasks:
            continue  # no task at all: each metric's line says why; a type's line says only what it lacks
        if not why and tried:
            counted = Counter(_reason(c, dropped, reasons) for c in tried)
            top = ", ".join(f"{n} × {r}" for r, n in sorted(counted.items(), key=lambda x: (-x[1], x[0]))[:2])
            why = f"all {len(tried)} of its candidates were dropped ({top})" + \
                (f"; {setting_hint(minimum)}" if any("thin_support" in r for r in counted) else "")
        elif not why:
            why = (f"no candidate: no window, slice or set of groups of the data holds the {minimum.rows} rows each "
                   f"group needs (dbt var {VAR}, now {minimum.var_text()})")
        out.append(f"warning: no {kind} task: {why}")
    return out
