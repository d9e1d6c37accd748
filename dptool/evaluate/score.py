"""Scoring a run: every attempt of every task compared with its gold (dptool.answers); accuracy with its interval,
pass^k and why answers were wrong, overall and by group: analysis type, tier, rule type, domain, and the team's own
metrics and rules (DESIGN §4)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

from dptool.answers import compare
from dptool.bundle import fingerprint, short
from dptool.errors import DptoolError
from dptool.evaluate.answers_file import STATS, Answers, load_answers, load_run  # noqa: F401 - importable from here too
from dptool.evaluate.failures import dominant, failure_class, right_without_rules, rule_free_key
from dptool.evaluate.intervals import pass_hat, wilson
from dptool.evaluate.select import Selection, metric_of, rules_of

TIERS = ("knowledge", "knowledge+analytics", "knowledge+analytics+rule")
NO_RULE = "(no rule)"
NO_METRIC = "(no metric)"


def load_tasks(bundle: str | Path) -> list[dict]:
    """The tasks of a benchmark bundle, in file order."""
    path = Path(bundle) / "tasks.jsonl"
    if not path.is_file():
        raise DptoolError(f"{bundle}: no tasks.jsonl; expected a bundle written by `dptool generate`")
    tasks = []
    for i, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
        if line.strip():
            try:
                tasks.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DptoolError(f"{path}:{i}: not JSON ({exc.msg})") from None
    return tasks


CONDITIONS_OF_RULE_TASKS = ("oracle", "no-rule")  # conditions `eval` runs on the rule tier alone


def as_run(tasks: list[dict], answers: Answers, selection: Selection, against: str | None = None) \
        -> tuple[list[dict], str, Selection]:
    """The tasks a run is scored on and against what, as it ran: a run folder's own selection where none is given
    (run.json's), the rule tier alone for a run of the oracle or no-rule condition, and against base (the rule-free
    answers) for a no-rule run unless `against` says otherwise. Returns (tasks, against, selection)."""
    ran = answers.run
    if selection.everything and isinstance(ran.get("selection"), dict):
        selection = Selection.from_dict(ran["selection"])
    if ran.get("condition") in CONDITIONS_OF_RULE_TASKS:
        tasks = [t for t in tasks if t.get("tier") == TIERS[-1]]
        if against is None and ran["condition"] == "no-rule":
            against = "base"
    return selection.apply(tasks), against or "gold", selection


def check_bundle(answers: Answers, bundle: str | Path, tasks: list[dict], shared_ids: bool) -> list[dict]:
    """The tasks to score: those given, unless the answers were made on another bundle — then an error, or with
    `shared_ids` the tasks of this bundle the answers answer. Answers that carry no fingerprint (written by hand)
    are taken as made on this bundle."""
    mine = fingerprint(bundle)
    others = sorted(answers.bundles - {mine})
    if not others:
        return tasks
    where = answers.path or "the answers"
    if not shared_ids:
        raise DptoolError(f"{where}: made on bundle {short(others[0])}, not on {bundle} ({short(mine)}); score "
                          "the task ids both hold with --shared-ids, or answer this bundle")
    held = answers.task_ids()
    return [t for t in tasks if t["task_id"] in held]


def _group(results: list[dict], key, k: int, failures: bool = False) -> dict[str, dict]:
    """A cell per group; with `failures`, the group's dominant failure class too ([class, wrong attempts], None
    when none is wrong)."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        for name in key(r):
            groups[name].append(r)
    return {name: cell(v, k) | ({"dominant_failure": _dominant(v)} if failures else {})
            for name, v in sorted(groups.items())}


def _dominant(results: list[dict]) -> list | None:
    counts = Counter(a["failure"] for r in results for a in r["attempts"] if not a["correct"])
    found = dominant(dict(counts))
    return None if found is None else list(found)


def _ci(p: float, n: int) -> list[float]:
    return [round(x, 4) for x in wilson(p, n)]


def cell(results: list[dict], k: int) -> dict:
    """Accuracy of some tasks' results with its 95 % interval over tasks (dptool.evaluate.intervals); with k > 1
    attempts accuracy is pass@1 (right attempts of all n·k), and pass^k the share of tasks right in every attempt."""
    n = len(results)
    right = [r["right"] for r in results]
    accuracy = sum(right) / (n * k) if n else None
    out = {"n": n, "correct": sum(right), "accuracy": None if accuracy is None else round(accuracy, 4),
           "ci95": _ci(accuracy, n) if n else None}
    if k > 1:
        every = sum(1 for c in right if c == k)
        out.update({"attempts": n * k, "all_correct": every,
                    "pass_hat_k": round(pass_hat(right, k), 4) if n else None,
                    "pass_hat_k_ci95": _ci(every / n, n) if n else None})
    return out


def _mean(values: list[float]) -> float | None:
    if len(values) <= 1:
        return values[0] if values else None
    return round(sum(values) / len(values), 3)


def score(tasks: list[dict], answers: Answers, *, against: str = "gold", epochs: int | None = None,
          bundle_ids: set[str] | None = None) -> dict:
    """Score every task's attempts 1..k (a missing answer is wrong: "no answer"; k: `epochs`, else the run's, else
    the highest attempt the answers of these tasks hold); accuracy with its interval overall and by group, pass^k
    for k > 1, why answers were wrong (dptool.evaluate.failures) and each task's seconds, tool calls, SQL errors and
    tokens. Against "base" (the no-rule condition) a task is scored against its rule-free answer: a
    counterfactual's base applies every rule. `bundle_ids`: every task id of the bundle (default: the tasks'), so
    that an answer to a task left out of the selection is not one "not in the bundle"."""
    k = epochs or answers.epochs or max(answers.attempts_held({t["task_id"] for t in tasks}), 1)
    results = []
    for task in tasks:
        task_id = task["task_id"]
        expected = expected_key(task, against)
        attempts = []
        for attempt in range(1, k + 1):
            given = answers.answer(task_id, attempt)
            verdict = compare(task, given, against=expected)
            attempts.append({"attempt": attempt, "answered": given is not None, "correct": verdict.correct,
                             "reason": verdict.reason, "kind": verdict.kind,
                             "failure": failure_class(task, given, verdict, against, expected), "answer": given,
                             **answers.stats.get((task_id, attempt), {})})
        shown = next((a for a in attempts if not a["correct"]), attempts[0])  # the first wrong attempt
        results.append({
            "task_id": task_id,
            "analysis_type": task.get("analysis_type", ""),
            "tier": task.get("tier", ""),
            "domain": task.get("domain", ""),
            "rule_types": sorted(set(task.get("rule_types") or [])),
            "metric": metric_of(task),
            "rule_ids": rules_of(task),
            "right_without_rules": right_without_rules(task),
            "answered": any(a["answered"] for a in attempts),
            "correct": all(a["correct"] for a in attempts),
            "right": sum(a["correct"] for a in attempts),
            "reason": shown["reason"],
            "kind": shown["kind"],
            "failure": shown["failure"],
            "question": task.get("question", ""),
            "expected": task.get("gold") if task.get(expected) is None else task[expected],
            # what the card of a wrong answer shows beside it: the rules its gold applies, the answer without them
            "rules_in_force": [r for r in task.get("rules_in_force") or [] if isinstance(r, str)],
            "without_rules": task.get(rule_free_key(task) or "base"),
            "answer": shown["answer"],
            **{stat: _mean([a[stat] for a in attempts if stat in a]) for stat in STATS},
            "attempts": attempts,
        })
    known = {t["task_id"] for t in tasks}
    every = [a for r in results for a in r["attempts"]]
    answered = [a for a in every if a["answered"]]
    beyond = sorted({a for t, a in answers.later if a > k and t in known})
    problems = answers.problems + [f"answers for attempt {a}, beyond the run's {k} epoch{'s' if k > 1 else ''}, "
                                   "not scored" for a in beyond]
    return {
        "against": against,
        "epochs": k,
        # the headline: over every task selected, a missing answer wrong; then the coverage and the accuracy
        # over the answered attempts alone, which says how good the answers given are, not how many there are
        "overall": {**cell(results, k), "answered": len(answered),
                    "coverage": round(len(answered) / len(every), 4) if every else None,
                    "accuracy_answered": round(sum(a["correct"] for a in answered) / len(answered), 4)
                    if answered else None},
        "by_analysis_type": _group(results, lambda r: [r["analysis_type"]], k),
        "by_tier": {t: c for t, c in sorted(_group(results, lambda r: [r["tier"]], k).items(), key=_tier_order)},
        "by_rule_type": _group(results, lambda r: r["rule_types"] or [NO_RULE], k),
        "by_domain": _group(results, lambda r: [r["domain"]], k),
        "by_metric": _group(results, lambda r: [r["metric"] or NO_METRIC], k, failures=True),
        "by_rule": _group(results, lambda r: r["rule_ids"] or [NO_RULE], k, failures=True),
        # tasks an answer ignoring every rule gets right, by tier: a rule task among them tests no rule
        "right_without_rules": {t: sum(r["right_without_rules"] for r in results if r["tier"] == t)
                                for t in sorted({r["tier"] for r in results}, key=_tier_rank)},
        "reasons": dict(sorted(Counter(a["failure"] for a in every if not a["correct"]).items())),
        "usage": {stat: round(sum(a.get(stat, 0) for a in every), 3) for stat in STATS}
        | {"attempts_recorded": sum(1 for a in every if any(stat in a for stat in STATS))},
        "answers_file": {"problems": problems, "unknown_task_ids": sorted(
            answers.task_ids() - (known if bundle_ids is None else bundle_ids))},
        "results": results,
    }


def expected_key(task: dict, against: str) -> str:
    """The task's field an answer is compared with: the gold; against "base", its rule-free answer (a
    counterfactual's base applies every rule)."""
    return (rule_free_key(task) or "base") if against == "base" else against


def _tier_rank(tier: str) -> tuple[int, str]:
    return (TIERS.index(tier) if tier in TIERS else len(TIERS), tier)


def _tier_order(item: tuple[str, dict]) -> tuple[int, str]:
    return _tier_rank(item[0])
