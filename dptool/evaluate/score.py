"""Scoring a run: every attempt of every task compared with its gold (dptool.answers); accuracy with its interval,
pass^k and why answers were wrong, overall and by group (DESIGN §4)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

from dptool.answers import compare
from dptool.bundle import fingerprint, short
from dptool.errors import DptoolError
from dptool.evaluate.answers_file import STATS, Answers, load_answers, load_run  # noqa: F401 - importable from here too
from dptool.evaluate.failures import failure_class
from dptool.evaluate.intervals import pass_hat, wilson

TIERS = ("knowledge", "knowledge+analytics", "knowledge+analytics+rule")
NO_RULE = "(no rule)"


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


def _group(results: list[dict], key, k: int) -> dict[str, dict]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        for name in key(r):
            groups[name].append(r)
    return {name: cell(v, k) for name, v in sorted(groups.items())}


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


def score(tasks: list[dict], answers: Answers, *, against: str = "gold", epochs: int | None = None) -> dict:
    """Score every task's attempts 1..k (a missing answer is wrong: "no answer"; k: `epochs`, else the run's, else
    the highest attempt the answers hold); accuracy with its interval overall and by group, pass^k for k > 1,
    why answers were wrong (dptool.evaluate.failures) and each task's seconds, tool calls, SQL errors and tokens."""
    k = epochs or answers.epochs or max(answers.attempts_held(), 1)
    results = []
    for task in tasks:
        task_id = task["task_id"]
        attempts = []
        for attempt in range(1, k + 1):
            given = answers.answer(task_id, attempt)
            verdict = compare(task, given, against=against)
            attempts.append({"attempt": attempt, "answered": given is not None, "correct": verdict.correct,
                             "reason": verdict.reason, "kind": verdict.kind,
                             "failure": failure_class(task, given, verdict, against), "answer": given,
                             **answers.stats.get((task_id, attempt), {})})
        shown = next((a for a in attempts if not a["correct"]), attempts[0])  # the first wrong attempt
        results.append({
            "task_id": task_id,
            "analysis_type": task.get("analysis_type", ""),
            "tier": task.get("tier", ""),
            "domain": task.get("domain", ""),
            "rule_types": sorted(set(task.get("rule_types") or [])),
            "answered": any(a["answered"] for a in attempts),
            "correct": all(a["correct"] for a in attempts),
            "right": sum(a["correct"] for a in attempts),
            "reason": shown["reason"],
            "kind": shown["kind"],
            "failure": shown["failure"],
            "question": task.get("question", ""),
            "expected": task.get(against),
            "answer": shown["answer"],
            **{stat: _mean([a[stat] for a in attempts if stat in a]) for stat in STATS},
            "attempts": attempts,
        })
    known = {t["task_id"] for t in tasks}
    every = [a for r in results for a in r["attempts"]]
    answered = [a for a in every if a["answered"]]
    beyond = sorted({a for _, a in answers.later if a > k})
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
        "reasons": dict(sorted(Counter(a["failure"] for a in every if not a["correct"]).items())),
        "usage": {stat: round(sum(a.get(stat, 0) for a in every), 3) for stat in STATS}
        | {"attempts_recorded": sum(1 for a in every if any(stat in a for stat in STATS))},
        "answers_file": {"problems": problems, "unknown_task_ids": sorted(answers.task_ids() - known)},
        "results": results,
    }


def _tier_order(item: tuple[str, dict]) -> tuple[int, str]:
    return (TIERS.index(item[0]) if item[0] in TIERS else len(TIERS), item[0])
