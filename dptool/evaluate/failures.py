"""Why a wrong answer is wrong, as a class: the two failures the benchmark exists to find, named, else the
comparison's own kind (no answer, wrong value, wrong rows, …; dptool.answers).

- "rules not applied": the answer is wrong against the gold and right against the task's base answer, the
  answer computed without the business rules (within the task's tolerance): the agent found the metric and
  missed the rules.
- "truncated": a list answer (ranking, breakdown) holding fewer rows than the gold has, at least one: an agent
  that read a preview (dbt-mcp's `show` returns 5 rows unless asked for more) instead of the whole result.

When both hold (a rule that adds groups, so the base list is shorter than the gold), the class is "rules not
applied": equality with the base answer identifies the failure, a short list only suggests one.
"""

from __future__ import annotations

from typing import Any

from dptool.answers import Verdict, Wrong, compare, parse_answer
from dptool.answers.formats import rows_of

RULES_NOT_APPLIED = "rules not applied"
TRUNCATED = "truncated"
LIST_FORMATS = ("ranking", "breakdown")


def failure_class(task: dict, answer: Any, verdict: Verdict, against: str = "gold") -> str:
    """The class of a wrong answer ("" for a right one). Against base (the no-rule condition) rules are not
    expected, so no answer is "rules not applied" there."""
    if verdict.correct:
        return ""
    if answer is None:
        return verdict.kind
    if against == "gold" and task.get("base") is not None and compare(task, answer, against="base").correct:
        return RULES_NOT_APPLIED
    if truncated(task, answer, task.get(against)):
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
