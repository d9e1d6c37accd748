"""Scoring a run: every attempt of every task compared with its gold (dptool.answers); accuracy with its interval,
pass^k and why answers were wrong, overall and by group: analysis type, tier, rule type, domain, and the team's own
metrics and rules (DESIGN §4)."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dptool.answers import DuplicateKeys, Malformed, compare, read_json
from dptool.bundle import fingerprint, short
from dptool.errors import DptoolError
from dptool.evaluate.failures import dominant, failure_class, right_without_rules, rule_free_key
from dptool.evaluate.intervals import pass_hat, wilson
from dptool.evaluate.limits import EPOCHS
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


STATS = ("seconds", "tool_calls", "sql_errors", "prompt_tokens", "completion_tokens")  # of one attempt, where known


@dataclass
class Answers:
    """Answers by task id and attempt (the last line of a (task, attempt) counts), what was wrong with the file,
    and the fingerprints of the bundles its records say they were made on (dptool.bundle).

    `by_task` holds attempt 1 (a record without "attempt" is attempt 1), `later` the attempts after it by
    (task id, attempt); `stats` what a record says of its attempt (seconds, tool calls, SQL errors, tokens);
    `epochs` the attempts per task the run's run.json asks for (None: as many as the answers hold).
    """

    by_task: dict[str, Any]
    problems: list[str]
    bundles: set[str] = field(default_factory=set)
    path: Path | None = None
    later: dict[tuple[str, int], Any] = field(default_factory=dict)
    stats: dict[tuple[str, int], dict] = field(default_factory=dict)
    run: dict = field(default_factory=dict)  # a run folder's run.json: its selection and condition
    epochs: int | None = None

    def has(self, task_id: str, attempt: int) -> bool:
        return task_id in self.by_task if attempt == 1 else (task_id, attempt) in self.later

    def answer(self, task_id: str, attempt: int) -> Any:
        return self.by_task.get(task_id) if attempt == 1 else self.later.get((task_id, attempt))

    def task_ids(self) -> set[str]:
        return set(self.by_task) | {task_id for task_id, _ in self.later}

    def attempts_held(self, task_ids: set[str] | None = None) -> int:
        """The highest attempt number the answers hold (0 when they hold none), of these tasks alone if given:
        a line for a task not scored never sets how many attempts the scored ones have."""
        if task_ids is None:
            return max((a for _, a in self.later), default=1 if self.by_task else 0)
        return max((a for t, a in self.later if t in task_ids),
                   default=1 if any(t in task_ids for t in self.by_task) else 0)

    def only(self, task_ids: set[str]) -> None:
        """Keep the answers of these tasks alone."""
        self.by_task = {k: v for k, v in self.by_task.items() if k in task_ids}
        self.later = {k: v for k, v in self.later.items() if k[0] in task_ids}


MAX_ATTEMPTS = EPOCHS[1]  # attempts per task, as `dptool eval --epochs` allows them


def _attempt(record: dict) -> int | None:
    attempt = record.get("attempt", 1)
    return attempt if isinstance(attempt, int) and not isinstance(attempt, bool) and 1 <= attempt <= MAX_ATTEMPTS \
        else None


def _stats(record: dict) -> dict:
    return {k: record[k] for k in STATS if isinstance(record.get(k), int | float) and not isinstance(record[k], bool)
            and math.isfinite(record[k]) and record[k] >= 0}


def load_answers(path: str | Path) -> Answers:
    """Read an answers JSONL file: {"task_id": ..., "attempt": 1-based (absent: 1), "answer": JSON or text,
    "transcript": optional, and optional stats: seconds, tool_calls, sql_errors, prompt_tokens, completion_tokens}.

    A byte order mark is no part of the first line. A key twice in any object of an answer makes that answer
    malformed, and "answer" twice in a record too: json's last-wins would pick one of two claims.
    """
    path = Path(path)
    if not path.is_file():
        raise DptoolError(f"{path}: answers file not found")
    answers = Answers({}, [], set(), path)
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        for i, line in enumerate(f, 1):
            line = line.lstrip("\ufeff")  # a file glued from several, each with its mark
            if not line.strip():
                continue
            try:
                record = read_json(line)
            except (ValueError, RecursionError):
                answers.problems.append(f"line {i}: not JSON")
                continue
            twice = record.keys_twice if isinstance(record, DuplicateKeys) else ()
            if "task_id" in twice or "attempt" in twice:
                answers.problems.append(f"line {i}: the key {'task_id' if 'task_id' in twice else 'attempt'!r} twice")
                continue
            if not isinstance(record, dict) or not isinstance(record.get("task_id"), str):
                answers.problems.append(f"line {i}: no task_id")
                continue
            task_id, answer, attempt = record["task_id"], record.get("answer"), _attempt(record)
            if attempt is None:
                answers.problems.append(f"line {i}: attempt {json.dumps(record.get('attempt'))[:40]} is not a whole "
                                        f"number from 1 to {MAX_ATTEMPTS} (the line is not scored)")
                continue
            if isinstance(record.get("bundle"), str):
                answers.bundles.add(record["bundle"])
            if "answer" in twice:
                answers.problems.append(f"line {i}: the key 'answer' twice (the answer is malformed)")
                answer = Malformed("malformed answer: the key 'answer' twice in its record")
            if answers.has(task_id, attempt):
                which = "" if attempt == 1 else f", attempt {attempt}"
                answers.problems.append(f"line {i}: a second answer for {task_id}{which} (the last one counts)")
            if attempt == 1:
                answers.by_task[task_id] = answer
            else:
                answers.later[(task_id, attempt)] = answer
            answers.stats[(task_id, attempt)] = _stats(record)
    return answers


def load_run(path: str | Path) -> Answers:
    """An answers file, or a run folder (its answers.jsonl, and run.json's bundle fingerprint and epochs)."""
    path = Path(path)
    if not path.is_dir():
        return load_answers(path)
    answers = load_answers(path / "answers.jsonl")
    run = path / "run.json"
    if run.is_file():
        try:
            settings = json.loads(run.read_text(encoding="utf-8"))
        except ValueError:
            raise DptoolError(f"{run}: not JSON; it is the run's settings, written by dptool") from None
        answers.run = settings if isinstance(settings, dict) else {}
        fp = answers.run.get("bundle") or answers.run.get("tasks_sha256")
        if isinstance(fp, str) and fp:
            answers.bundles.add(fp)
        epochs = answers.run.get("epochs", 1)
        if not isinstance(epochs, int) or isinstance(epochs, bool) or not 1 <= epochs <= MAX_ATTEMPTS:
            raise DptoolError(f"{run}: epochs is {json.dumps(epochs)[:40]}; expected a whole number from 1 to "
                              f"{MAX_ATTEMPTS} (the attempts per task)")
        answers.epochs = epochs
    return answers


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
