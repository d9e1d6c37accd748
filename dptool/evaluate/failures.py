"""Why a wrong answer is wrong, as a class: the failures the benchmark exists to find, named, else the
comparison's own kind (no answer, wrong value, wrong rows, …; dptool.answers).

- "withdrawn rule still applied": on a counterfactual ("suppose rule X had never been adopted"), the answer
  is wrong against the gold and right against the task's base, which applies every rule, X included.
- "rules not applied": the answer is wrong against the gold and right against the rule-free answer (the metric
  computed under no rule: a counterfactual's `rule_free`, any other task's `base`), where that answer is itself
  wrong: the agent found the metric and missed the rules.
- "truncated": a list answer (ranking, breakdown) holding fewer rows than the gold has, at least one: an agent
  that read a preview (dbt-mcp's `show` returns 5 rows unless asked for more) instead of the whole result.

Equality with a named answer identifies a failure, a short list only suggests one: the named classes come first.
Where an answer equals both a counterfactual's base and its rule-free answer, it applied the withdrawn rule.
"""

from __future__ import annotations

from typing import Any

from dptool.answers import (
    CONTRADICTED,
    FACT,
    HEDGED,
    MALFORMED,
    NO_ANSWER,
    ROWS,
    VALUE,
    VERDICT,
    Verdict,
    Wrong,
    compare,
    parse_answer,
)
from dptool.answers.formats import rows_of
from dptool.generate.rule_free import COUNTERFACTUAL, right_without_rules, rule_free_key

__all__ = ["DEFINITIONS", "NAMED", "RULES_NOT_APPLIED", "TRUNCATED", "WITHDRAWN_APPLIED", "definition", "dominant",
           "failure_class", "right_without_rules", "rule_free_key", "truncated"]

WITHDRAWN_APPLIED = "withdrawn rule still applied"
RULES_NOT_APPLIED = "rules not applied"
TRUNCATED = "truncated"
NAMED = (RULES_NOT_APPLIED, WITHDRAWN_APPLIED, TRUNCATED)  # the failures the benchmark exists to find
LIST_FORMATS = ("ranking", "breakdown")

DEFINITIONS = {  # one line each, as score.md, report.html and compare state them
    WITHDRAWN_APPLIED: "on a counterfactual, the answer with every rule applied, the withdrawn one included",
    RULES_NOT_APPLIED: "the answer computed under no rule, where that answer is not the gold",
    TRUNCATED: "a list with fewer rows than the gold (a preview read instead of the whole result)",
    NO_ANSWER: "no answer recorded, or an empty one",
    MALFORMED: "not readable in the answer format the task asks for",
    HEDGED: "more than one claim where one is asked (a second value, verdict or alternative)",
    CONTRADICTED: "an answer at odds with itself, or stating the rule the other way round",
    VALUE: "a value outside the task's tolerance of the gold",
    VERDICT: "the wrong verdict (pass or fail, direction, significance, which is higher)",
    ROWS: "the wrong rows: groups missing, added, out of order or with wrong values",
    FACT: "a knowledge answer missing a key fact of the rule (a threshold, a date, a condition)",
}


def definition(name: str) -> str:
    """The one-line definition of a failure class ("" for one not defined here)."""
    return DEFINITIONS.get(name, "")


def failure_class(task: dict, answer: Any, verdict: Verdict, against: str = "gold", key: str | None = None) -> str:
    """The class of a wrong answer ("" for a right one), compared with the task's field `key` (default: `against`).
    Against base (the no-rule condition) rules are not expected, so no answer is classed as missing or misapplying
    them there."""
    if verdict.correct:
        return ""
    if answer is None:
        return verdict.kind
    if against == "gold":
        counterfactual = task.get("analysis_type") == COUNTERFACTUAL
        if counterfactual and task.get("base") is not None and compare(task, answer, against="base").correct:
            return WITHDRAWN_APPLIED
        free = rule_free_key(task)
        if free not in (None, "gold") and compare(task, answer, against=free).correct \
                and not compare(task, task[free]).correct:
            return RULES_NOT_APPLIED
    if truncated(task, answer, task.get(key or against)):
        return TRUNCATED
    return verdict.kind


def truncated(task: dict, answer: Any, expected: Any) -> bool:
    """Whether a list answer holds at least one row and fewer than the expected list."""
    fmt = task.get("answer_format") or {}
    if fmt.get("type") not in LIST_FORMATS or not isinstance(expected, list):
        return False
    try:
        parsed = parse_answer(answer)
        if fmt["type"] == "breakdown" and isinstance(parsed, dict) and len(parsed) > 1 \
                and not any(isinstance(v, dict | list) for v in parsed.values()):
            rows = list(parsed.items())  # {"SP": 1.2, "RJ": 3.4}, as the breakdown comparison reads it
        else:
            rows = rows_of(parsed, fmt.get("key", ""))
    except (Wrong, TypeError, ValueError, KeyError, AttributeError, RecursionError):
        return False
    return 0 < len(rows) < len(expected)


def dominant(counts: dict[str, int]) -> tuple[str, int] | None:
    """The most frequent failure class (ties: by name) and its count; None without a wrong answer."""
    if not counts:
        return None
    name, n = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return name, n
