"""The answer a task has under no rule, and the tasks it answers right (they test no rule).

A task's `base` is computed without its rules, except a counterfactual's: "suppose rule X had never been adopted"
keeps every other rule in force, so its base applies every rule, X included, and the answer under no rule is
stored apart, as `rule_free` (dptool.generate.enrich). The scorer names a miss equal to it "rules not applied";
card.md and score.md count the rule tasks whose gold it is.
"""

from __future__ import annotations

from dptool.answers import compare

COUNTERFACTUAL = "counterfactual"


def rule_free_key(task: dict) -> str | None:
    """The task's field holding its answer under no rule: `rule_free` on a counterfactual, else `base`; `gold` for a
    counterfactual with no rule left in force (of a bundle written before `rule_free`); None where there is none (a
    knowledge task, or such a counterfactual whose gold applies some rule)."""
    if task.get("analysis_type") == COUNTERFACTUAL:
        if task.get("rule_free") is not None:
            return "rule_free"
        return "gold" if not task.get("rules_in_force") and task.get("gold") is not None else None
    return "base" if task.get("base") is not None else None


def right_without_rules(task: dict) -> bool:
    """Whether the answer under no rule is right: a task no rule governs, or a rule task whose gold is, within its
    tolerance, its rule-free answer (a counterfactual with no rule left in force, or none that changes its slice),
    which an agent ignoring the rule documents answers right. A knowledge task never is."""
    key = rule_free_key(task)
    return key is not None and (key == "gold" or compare(task, task[key]).correct)
