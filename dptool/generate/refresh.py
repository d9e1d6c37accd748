"""`dptool generate --refresh OLD`: every task of OLD sorted into unchanged, same question with a new gold, dropped
(and why: its metric or rule is gone, its slice has no data, its rules no longer change it, validation, or it was
not sampled this time) and the tasks added.

Tasks are matched by what they ask (`dptool.generate.ids.task_key`), so a bundle written before ids named content
is matched too, and its old id is reported beside the new one.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from dptool.errors import DptoolError
from dptool.generate.ids import Ids, candidate_key, canonical, task_key
from dptool.generate.instantiate import Candidate, Window
from dptool.generate.sample import Skeleton

# why a task of the old bundle is not in the new one, most telling first
METRIC_GONE, RULE_GONE, UNASKABLE, NO_EFFECT, NO_DATA, SQL_ERROR, REJECTED, DUPLICATE, NOT_SAMPLED = (
    "metric gone", "rule gone", "cannot be asked", "rules change nothing", "no data", "SQL error",
    "rejected by validation", "same question as another task", "not sampled")


def read_tasks(bundle: str | Path) -> list[dict]:
    path = Path(bundle) / "tasks.jsonl"
    if not path.is_file():
        raise DptoolError(f"{path}: no tasks.jsonl; --refresh needs a bundle written by `dptool generate`")
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise DptoolError(f"{path}: line {exc.lineno} is not JSON") from None


def reasked(old: list[dict], catalog, profiles: dict, ids: Ids) -> tuple[list[Candidate], dict[str, str]]:
    """The old bundle's SQL questions asked again, as candidates, where the project can still ask them: same
    metric, dimension, slice, window and rule scope; the gold computed anew. Questions this run already asks are
    left out. Also, for each old question that cannot be asked (canonical key), why not.

    A question that applied every governing rule applies every rule that governs its metric now; one that named
    rules, or withdrew one, needs them to govern it still.
    """
    candidates, unaskable = [], {}
    for task in old:
        if task["analysis_type"] == "knowledge_retrieval" or not task.get("spec"):
            continue
        key = canonical(task_key(task))
        try:
            c = _candidate(task, catalog, profiles)
        except _Unaskable as exc:
            unaskable[key] = str(exc)
            continue
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a spec or slice edited by hand
            unaskable[key] = f"its recorded spec or slice is incomplete ({type(exc).__name__}: {exc})"
            continue
        if c is None or ids.taken(candidate_key(c, task["domain"])):
            continue
        c.task_id = ids(candidate_key(c, task["domain"]))
        candidates.append(c)
    return candidates, unaskable


def named_rules(task: dict) -> list[str]:
    """The rules a SQL task's question names: those it applies alone, or the one it withdraws. A question that
    applies every governing rule names none: it is asked again under the rules that govern its metric now."""
    if task.get("withdrawn_rule"):
        return [task["withdrawn_rule"]]
    if task.get("rule_scope") == "subset":
        return list(task.get("rules_in_force") or task["rule_ids"])
    if task.get("rule_scope") in ("all", "none"):
        return []
    return list(task["rule_ids"])  # a knowledge task's rule, or a task written before rule scopes


class _Unaskable(Exception):
    pass


def _candidate(task: dict, catalog, profiles: dict) -> Candidate | None:
    metric_id = task["metric_ids"][0]
    if metric_id not in catalog.metrics or any(r not in catalog.rules for r in named_rules(task)):
        return None  # why_dropped says which is gone
    metric = catalog.metrics[metric_id]
    governing = tuple(r.id for r in catalog.governing_rules(metric_id))
    spec, scope, withdrawn = task["spec"], task.get("rule_scope"), task.get("withdrawn_rule")
    base_rules: tuple[str, ...] = ()
    if withdrawn:
        if withdrawn not in governing:
            raise _Unaskable(f"the rule {withdrawn} it withdraws no longer governs {metric_id}")
        rules, gold, base_rules = tuple(r for r in task["rule_ids"] if r in governing), \
            tuple(r for r in governing if r != withdrawn), governing
    elif scope == "all":
        rules = gold = governing
    elif scope == "none":
        rules = gold = ()
    else:
        rules = gold = tuple(task.get("rules_in_force") or task["rule_ids"])
        stray = [r for r in rules if r not in governing]
        if stray:
            raise _Unaskable(f"the rule {stray[0]} it names no longer governs {metric_id}")
        if set(rules) == set(governing):
            raise _Unaskable(f"the rules it names are now every rule that governs {metric_id}: the question "
                             "would read differently")
    dims = {d.column: d for d in catalog.dimensions_of(metric)}
    if task["dimension"] not in dims:
        raise _Unaskable(f"{task['dimension']} is no longer a dimension of {metric_id}")
    dim = dims[task["dimension"]]
    window = (task.get("slice") or {}).get("window")
    temporal = catalog.dimensions.get(metric.period)
    read = [dim.column] + ([temporal.column] if window and temporal is not None else [])
    constant = [(r, c) for r in sorted(set(gold) | set(base_rules)) if r in catalog.rules for c in read
                if c in catalog.rules[r].constants]
    if constant:
        raise _Unaskable(f"the rule {constant[0][0]} sets {constant[0][1]}, which it slices, groups or windows by, "
                         "to a constant")
    encoding = profiles[temporal.id].encoding if temporal is not None and temporal.id in profiles else "timestamp"
    return Candidate(Skeleton(metric_id, dim.id, dim.kind, rules, metric.tables), task["analysis_type"],
                     list(spec.get("where") or []), list(spec.get("group_by") or []), spec["shape"], spec.get("k"),
                     spec.get("min_rows"), slice=task["slice"],
                     window=Window(date.fromisoformat(window["start"]), date.fromisoformat(window["end"]),
                                   window["label"]) if window else None,
                     gold_rules=gold, base_rules=base_rules, period=spec.get("period"), encoding=encoding,
                     rule_scope=scope, withdrawn_rule=withdrawn)


def why_dropped(task: dict, metrics, rules, made: dict[str, str], reasons: dict[str, str],
                unaskable: dict[str, str] | None = None) -> tuple[str, str]:
    """(category, detail) of an old task the new bundle does not hold.

    `metrics` and `rules` are the ids the project declares now, `made` maps each question the run made a
    candidate for (canonical key) to its id, `reasons` a dropped candidate's id to why it was dropped, and
    `unaskable` an old question the project can no longer ask (canonical key) to why not.
    """
    gone = [m for m in task["metric_ids"] if m not in metrics]
    if gone:
        return METRIC_GONE, f"the project no longer declares metric {', '.join(gone)}"
    gone = [r for r in named_rules(task) if r not in rules]
    if gone:
        return RULE_GONE, f"the project no longer declares rule {', '.join(gone)}"
    key = canonical(task_key(task))
    if key in (unaskable or {}):
        return UNASKABLE, unaskable[key]
    new_id = made.get(key)
    reason = reasons.get(new_id) if new_id else None
    if reason is None:
        return NOT_SAMPLED, "not among the skeletons sampled this run (the sample is drawn from the graph anew)"
    if reason.startswith("the rule does not change"):
        return NO_EFFECT, reason
    if reason.startswith("not scorable"):
        return NO_DATA, reason
    if reason.startswith("SQL error"):
        return SQL_ERROR, reason
    if reason == "another task asks the same question":
        return DUPLICATE, reason
    return REJECTED, reason


def diff(old: list[dict], new: list[dict], *, metrics, rules, made: dict[str, str], reasons: dict[str, str],
         unaskable: dict[str, str] | None = None) -> dict:
    """Every old task as unchanged, changed (same question, new gold) or dropped with its reason; new tasks
    no old one asked as added. Lists are sorted by id."""
    new_by_key = {canonical(task_key(t)): t for t in new}
    matched, unchanged, changed, dropped = set(), [], [], []
    for o in old:
        k = canonical(task_key(o))
        n = new_by_key.get(k)
        if n is None:
            why, reason = why_dropped(o, metrics, rules, made, reasons, unaskable)
            dropped.append({"old_id": o["task_id"], "question": o["question"], "why": why, "reason": reason})
            continue
        matched.add(k)
        ids = {"old_id": o["task_id"], "new_id": n["task_id"]}
        if n["gold"] == o["gold"]:
            unchanged.append(ids)
            continue
        entry = {**ids, "question": n["question"], "old_gold": o["gold"], "new_gold": n["gold"],
                 "old_rules": o.get("rules_in_force", o["rule_ids"]),
                 "new_rules": n.get("rules_in_force", n["rule_ids"])}
        if n["question"] != o["question"]:
            entry["old_question"] = o["question"]
        changed.append(entry)
    added = [{"new_id": t["task_id"], "question": t["question"]} for k, t in new_by_key.items() if k not in matched]
    by_why: dict[str, int] = {}
    for d in dropped:
        by_why[d["why"]] = by_why.get(d["why"], 0) + 1
    return {
        "old_tasks": len(old), "new_tasks": len(new),
        "unchanged": sorted(unchanged, key=lambda r: r["new_id"]),
        "changed": sorted(changed, key=lambda r: r["new_id"]),
        "dropped": sorted(dropped, key=lambda r: r["old_id"]),
        "dropped_by_why": dict(sorted(by_why.items())),
        "added": sorted(added, key=lambda r: r["new_id"]),
    }


def settings_line(made_with: dict) -> str:
    """How the new bundle was made, against the old one (`made_with`: {"old": ..., "new": ...})."""
    old, new = made_with.get("old"), made_with["new"]

    def shown(settings: dict) -> str:
        return ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in settings.items() if v is not None)

    if old is None:
        return f"Made with {shown(new)}; the old bundle records no settings (written before bundle.json)."
    differ = [f"{k.replace('_', ' ')} {old.get(k)} -> {v}" for k, v in new.items() if old.get(k) != v]
    if not differ:
        return f"Made as the old bundle was: {shown(new)}."
    return f"Made with {shown(new)}; changed since the old bundle: {', '.join(differ)}."


def _shown(answer) -> str:
    """An answer in one short cell: a value, a verdict, a trend, or the first rows of a list."""
    if isinstance(answer, dict):
        parts = [f"{k} {answer[k]}" for k in ("value", "result", "direction", "total_change_pct", "higher",
                                               "significant", "p_value") if k in answer]
        text = ", ".join(parts) if parts else json.dumps(answer, ensure_ascii=False, sort_keys=True)
    else:
        text = json.dumps(answer, ensure_ascii=False, sort_keys=True)
    return (text if len(text) <= 80 else text[:77] + "...").replace("|", "\\|")


def markdown(d: dict, old_bundle: str, settings: str = "") -> str:
    """refresh.md: the counts, then a table per kind of change."""
    lines = ["# Refresh", "",
             f"Compared with `{old_bundle}` ({d['old_tasks']} tasks; this bundle {d['new_tasks']}): "
             f"{len(d['unchanged'])} unchanged, {len(d['changed'])} same question with a new gold, "
             f"{len(d['dropped'])} dropped, {len(d['added'])} added.", ""]
    if settings:
        lines += [settings, ""]
    if d["dropped_by_why"]:
        lines += ["Dropped, by reason: " + ", ".join(f"{why} {n}" for why, n in d["dropped_by_why"].items()) + ".",
                  ""]
    renamed = [r for r in d["unchanged"] + d["changed"] if r["old_id"] != r["new_id"]]
    if renamed:
        lines += [f"{len(renamed)} tasks kept their question under a new id (the old bundle's ids were positions; "
                  "refresh.json maps them).", ""]
    if d["changed"]:
        lines += ["## Same question, new gold", "", "| id | question | old gold | new gold |",
                  "| --- | --- | --- | --- |"]
        lines += [f"| {r['new_id']} | {r['question'].replace('|', chr(92) + '|')} | {_shown(r['old_gold'])} | "
                  f"{_shown(r['new_gold'])} |" for r in d["changed"]]
        lines.append("")
    if d["dropped"]:
        lines += ["## Dropped", "", "| old id | why | detail | question |", "| --- | --- | --- | --- |"]
        lines += [f"| {r['old_id']} | {r['why']} | {r['reason'].replace('|', chr(92) + '|')} | "
                  f"{r['question'].replace('|', chr(92) + '|')} |" for r in d["dropped"]]
        lines.append("")
    if d["added"]:
        lines += ["## Added", "", "| id | question |", "| --- | --- |"]
        lines += [f"| {r['new_id']} | {r['question'].replace('|', chr(92) + '|')} |" for r in d["added"]]
        lines.append("")
    return "\n".join(lines)
