"""Stage 8, stage 1 of DI-Bench's validation: programmatic filters, every one named in the card."""

from __future__ import annotations

import json
import re
from collections import Counter

from dptool.answers import compare
from dptool.generate.enrich import FLAT_BAND_PCT
from dptool.generate.overlap import one_answer_fits_both
from dptool.generate.phrase import NO_POLICY, ONLY, REPORTABLE
from dptool.generate.support import LISTING, degenerate, thin
from dptool.project.catalog import Catalog
from dptool.project.selects import selections

CHECKS = ("identifier_leakage", "too_short", "datetime_as_category", "no_scorable_answer", "rule_without_effect",
          "scope_mismatch", "trend_rule_unstated", "selection_unstated", "thin_support", "degenerate_groups",
          "removed_group_asked")
MIN_QUESTION_CHARS = 20


def identifiers(catalog: Catalog) -> set[str]:
    """Names an agent must not be handed: tables, columns and metric ids written as code."""
    names = {t.name for t in catalog.tables.values()}
    names |= {c for t in catalog.tables.values() for c in t.columns}
    names |= set(catalog.metrics) | {f"rule__{r}" for r in catalog.rules}
    return {n.lower() for n in names if "_" in n or "." in n}


def issues(task: dict, catalog: Catalog, banned: set[str]) -> list[str]:
    """The stage-1 checks a task fails (empty when it passes)."""
    found = []
    tables = {t.name.lower() for t in catalog.tables.values()}
    question = task.get("question") or ""
    words = set(re.findall(r"[a-z0-9_]+", question.lower()))
    # `table.column` is code even when neither name has an underscore
    dotted = {m.group(1) for m in re.finditer(r"\b([a-z0-9_]+)\.[a-z0-9_]+", question.lower())}
    if words & banned or "dptool" in words or dotted & tables:
        found.append("identifier_leakage")
    if len(question.strip()) < MIN_QUESTION_CHARS:
        found.append("too_short")
    dims = {d.column: d.kind for d in catalog.dimensions.values()}
    # a time column used as a category: grouped by, or sliced on one of its values
    sliced = task.get("dimension") in (task.get("slice") or {})
    grouped = task["analysis_type"] in ("ranking", "comparison", "significance_testing", "decomposition")
    if dims.get(task.get("dimension")) == "temporal" and (grouped or sliced):
        found.append("datetime_as_category")
    if not _scorable(task.get("gold"), (task.get("answer_format") or {}).get("type")):
        found.append("no_scorable_answer")
    # a rule task whose base answer would score as correct does not test the rule: the same comparator
    # as the scorer's decides, under the task's own tolerance; nor does one where some answer is within the
    # tolerance of both (dptool.generate.overlap, per answer format)
    if task.get("rule_ids") and task.get("base") is not None and \
            (one_answer_fits_both(task) or compare(task, task["base"]).correct):
        found.append("rule_without_effect")
    if task.get("gold_sql") and scope_problem(task, catalog):
        found.append("scope_mismatch")
    if task["analysis_type"] == "trend_analysis" and not states_trend_rule(question):
        found.append("trend_rule_unstated")
    if selection_unstated(task, catalog, question):
        found.append("selection_unstated")
    support = task.get("support")
    if isinstance(support, dict):
        # an answer resting on one loan measures noise (dptool.generate.support)
        if thin(support):
            found.append("thin_support")
        # groups of which only one can have a value by the metric's definition compare nothing
        if degenerate(task):
            found.append("degenerate_groups")
        if removed_group_problem(task, question):
            found.append("removed_group_asked")
    return found


def removed_group_problem(task: dict, question: str) -> str | None:
    """Why a listing question (a breakdown, a ranking, a trend) and its gold's groups disagree (None when they
    agree): the rules in force remove groups or months (`support.removed`) exactly when the question says it lists
    only those its policies allow to be reported."""
    if task["analysis_type"] not in LISTING:
        return None
    removed = (task.get("support") or {}).get("removed") or []
    says = REPORTABLE in " ".join(question.split())
    if removed and not says:
        return f"the rules remove {len(removed)} of the groups the question asks for: {removed[:3]}"
    if says and not removed:
        return "the question says some groups are not reported, and the rules remove none"
    return None


SCOPES = ("all", "subset", "none")


def scope_problem(task: dict, catalog: Catalog) -> str | None:
    """Why a SQL task's stated rule scope and its gold disagree (None when they agree).

    The rules that govern the metric are a closure (`Catalog.governing_rules`): those that modify it, and
    its components'. `rule_scope` "all" keeps every one of them in force (a counterfactual: all but
    `withdrawn_rule`), "none" keeps none, "subset" a part the question names. `rules_in_force` must be
    exactly that, the gold model must have applied exactly those (`spec.rules`; a counterfactual's base
    every one), and the question must say so: nothing for "all", "apply only" and each title for "subset",
    "before any policy" for "none", the withdrawn policy and "every other policy" for a counterfactual.
    """
    metric_ids = task.get("metric_ids") or []
    if not metric_ids or metric_ids[0] not in catalog.metrics:
        return "the task names no metric of the catalog"
    governing = {r.id for r in catalog.governing_rules(metric_ids[0])}
    scope_, in_force = task.get("rule_scope"), task.get("rules_in_force")
    withdrawn = task.get("withdrawn_rule")
    if scope_ not in SCOPES or not isinstance(in_force, list):
        return "the task records no rule_scope or rules_in_force"
    in_force_set = set(in_force)
    counterfactual = task.get("analysis_type") == "counterfactual"
    if counterfactual != bool(withdrawn) or (withdrawn and (withdrawn not in governing or scope_ != "all")):
        return "a counterfactual withdraws one governing rule, with every other one in force (and only it does)"
    expected = {"all": governing - {withdrawn}, "none": set()}.get(scope_)
    if expected is not None and in_force_set != expected:
        return f"rule_scope {scope_!r} means {sorted(expected)} in force, the task has {sorted(in_force_set)}"
    if scope_ == "subset" and not (in_force_set and in_force_set < governing):
        return f"rule_scope 'subset' needs part of {sorted(governing)}, the task has {sorted(in_force_set)}"
    spec = task.get("spec") or {}
    if "rules" in spec and set(spec["rules"]) != in_force_set:
        return f"the gold applies {sorted(spec['rules'])}, not the rules in force {sorted(in_force_set)}"
    if counterfactual and "base_rules" in spec and set(spec["base_rules"]) != governing:
        return "a counterfactual's base applies every governing rule"
    question = " ".join((task.get("question") or "").lower().replace("\u2019", "'").split())
    titles = {r: catalog.rules[r].title.lower() for r in governing}
    says_only, says_none = ONLY in question, "before any polic" in question or NO_POLICY in question
    if scope_ == "subset":
        missing = [titles[r] for r in sorted(in_force_set) if titles[r] not in question]
        named_out = [titles[r] for r in sorted(governing - in_force_set) if f'"{titles[r]}"' in question]
        if not says_only or missing or named_out:
            return "a 'subset' question says \"apply only\" and names exactly the policies in force"
    elif scope_ == "none":
        if not says_none or says_only:
            return "a 'none' question says the answer comes before any policy"
    elif counterfactual:
        if titles[withdrawn] not in question or "every other policy" not in question or says_only or says_none:
            return "a counterfactual names the withdrawn policy and keeps every other policy in force"
    elif says_only or says_none or "never been adopted" in question:
        return "an 'all' question says nothing about which policies apply"
    return None


def states_trend_rule(question: str) -> bool:
    """Does a trend question say how its direction is decided (the least-squares line and its flat band)?"""
    text = " ".join(question.lower().replace("-", " ").split())
    band = re.escape(f"{FLAT_BAND_PCT:g}")
    return "least squares" in text and re.search(rf"(?<![\d.]){band}(?: ?%| percent)", text) is not None


REQUIRED_KEYS = {
    "value": ("value",),
    "threshold": ("value", "threshold", "result"),
    "trend": ("direction", "total_change_pct", "peak_period"),
    "comparison": ("group_a", "group_b", "value_a", "value_b", "higher"),
    "significance": ("significant", "p_value", "test_name"),
}


def _scorable(gold, kind: str | None) -> bool:
    if kind == "knowledge":
        return isinstance(gold, dict) and len(gold.get("passage") or "") > 10 and bool(gold.get("facts"))
    if kind in ("ranking", "breakdown"):
        return isinstance(gold, list) and bool(gold) and all(isinstance(g, dict) and "value" in g for g in gold) \
            and any(g["value"] is not None for g in gold)
    keys = REQUIRED_KEYS.get(kind or "value", ("value",))
    return isinstance(gold, dict) and all(gold.get(k) is not None for k in keys)


def validate(tasks: list[dict], catalog: Catalog) -> tuple[list[dict], Counter]:
    """Tasks that pass every check, and how many tasks each check rejected."""
    banned = identifiers(catalog)
    kept, rejected = [], Counter({c: 0 for c in CHECKS})
    for task in tasks:
        failed = issues(task, catalog, banned)
        rejected.update(failed)
        if not failed:
            kept.append(task)
    return kept, rejected


def duplicate_questions(tasks: list[dict]) -> set[str]:
    """Task ids to drop so that no two tasks ask the same question: of equal questions with the same
    gold, all but the first; with different golds, all (an agent could not tell which is meant)."""
    groups: dict[str, list[dict]] = {}
    for task in sorted(tasks, key=lambda t: t["task_id"]):
        key = " ".join(task["question"].lower().split())
        groups.setdefault(key, []).append(task)
    drop = set()
    for same in groups.values():
        if len(same) > 1:
            golds = {json.dumps(t["gold"], sort_keys=True, default=str) for t in same}
            drop |= {t["task_id"] for t in (same[1:] if len(golds) == 1 else same)}
    return drop


def selection_unstated(task: dict, catalog: Catalog, question: str) -> bool:
    """A question on a metric that selects members (the top ten sellers, the active ones) that does not say the
    window they are picked over (`Selection.window_text`, meta.dptool.metric.selection): the same words a
    phrased question ends with, so an LLM's question must keep them too. Knowledge tasks ask about documents."""
    ids = task.get("metric_ids") or []
    if task.get("analysis_type") == "knowledge_retrieval" or not ids or ids[0] not in catalog.metrics:
        return False
    said = " ".join(question.lower().split())
    return any(" ".join(s.window_text.lower().split()) not in said for s in selections(catalog, ids[0]))
