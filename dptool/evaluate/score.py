"""Scoring a run: every answer compared with its task's gold (dptool.answers), accuracy by group (DESIGN §4)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dptool.answers import DuplicateKeys, Malformed, compare, read_json
from dptool.bundle import fingerprint, short
from dptool.errors import DptoolError

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


@dataclass
class Answers:
    """Answers by task id (the last line of a task counts), what was wrong with the file, and the fingerprints
    of the bundles its records say they were made on (dptool.bundle)."""

    by_task: dict[str, Any]
    problems: list[str]
    bundles: set[str] = field(default_factory=set)
    path: Path | None = None


def load_answers(path: str | Path) -> Answers:
    """Read an answers JSONL file: {"task_id": ..., "answer": JSON or text, "transcript": optional}.

    A byte order mark is no part of the first line. A key twice in any object of an answer makes that answer
    malformed, and "answer" twice in a record too: json's last-wins would pick one of two claims.
    """
    path = Path(path)
    if not path.is_file():
        raise DptoolError(f"{path}: answers file not found")
    by_task: dict[str, Any] = {}
    problems = []
    bundles = set()
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        for i, line in enumerate(f, 1):
            line = line.lstrip("\ufeff")  # a file glued from several, each with its mark
            if not line.strip():
                continue
            try:
                record = read_json(line)
            except (ValueError, RecursionError):
                problems.append(f"line {i}: not JSON")
                continue
            twice = record.keys_twice if isinstance(record, DuplicateKeys) else ()
            if "task_id" in twice:
                problems.append(f"line {i}: the key 'task_id' twice")
                continue
            if not isinstance(record, dict) or not isinstance(record.get("task_id"), str):
                problems.append(f"line {i}: no task_id")
                continue
            task_id, answer = record["task_id"], record.get("answer")
            if isinstance(record.get("bundle"), str):
                bundles.add(record["bundle"])
            if "answer" in twice:
                problems.append(f"line {i}: the key 'answer' twice (the answer is malformed)")
                answer = Malformed("malformed answer: the key 'answer' twice in its record")
            if task_id in by_task:
                problems.append(f"line {i}: a second answer for {task_id} (the last one counts)")
            by_task[task_id] = answer
    return Answers(by_task, problems, bundles, path)


def load_run(path: str | Path) -> Answers:
    """An answers file, or a run folder (its answers.jsonl, and run.json's bundle fingerprint)."""
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
        fp = settings.get("bundle") or settings.get("tasks_sha256")
        if isinstance(fp, str) and fp:
            answers.bundles.add(fp)
    return answers


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
    return [t for t in tasks if t["task_id"] in answers.by_task]


def _group(results: list[dict], key) -> dict[str, dict]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        for name in key(r):
            groups[name].append(r["correct"])
    return {name: _cell(v) for name, v in sorted(groups.items())}


def _cell(flags: list[bool]) -> dict:
    n, correct = len(flags), sum(flags)
    return {"n": n, "correct": correct, "accuracy": round(correct / n, 4) if n else None}


def score(tasks: list[dict], answers: Answers, *, against: str = "gold") -> dict:
    """Score every task (a missing answer is wrong: "no answer"); accuracy overall and by group."""
    results = []
    for task in tasks:
        given = task["task_id"] in answers.by_task
        verdict = compare(task, answers.by_task.get(task["task_id"]), against=against)
        results.append({
            "task_id": task["task_id"],
            "analysis_type": task.get("analysis_type", ""),
            "tier": task.get("tier", ""),
            "domain": task.get("domain", ""),
            "rule_types": sorted(set(task.get("rule_types") or [])),
            "answered": given and answers.by_task[task["task_id"]] is not None,
            "correct": verdict.correct,
            "reason": verdict.reason,
            "kind": verdict.kind,
            "question": task.get("question", ""),
            "expected": task.get(against),
            "answer": answers.by_task.get(task["task_id"]),
        })
    known = {t["task_id"] for t in tasks}
    answered = [r["correct"] for r in results if r["answered"]]
    return {
        "against": against,
        # the headline: over every task selected, a missing answer wrong; then the coverage and the accuracy
        # over the answered tasks alone, which says how good the answers given are, not how many there are
        "overall": {**_cell([r["correct"] for r in results]), "answered": len(answered),
                    "coverage": round(len(answered) / len(results), 4) if results else None,
                    "accuracy_answered": _cell(answered)["accuracy"]},
        "by_analysis_type": _group(results, lambda r: [r["analysis_type"]]),
        "by_tier": {t: c for t, c in sorted(_group(results, lambda r: [r["tier"]]).items(), key=_tier_order)},
        "by_rule_type": _group(results, lambda r: r["rule_types"] or [NO_RULE]),
        "by_domain": _group(results, lambda r: [r["domain"]]),
        "reasons": dict(sorted(Counter(r["kind"] for r in results if not r["correct"]).items())),
        "answers_file": {"problems": answers.problems,
                         "unknown_task_ids": sorted(set(answers.by_task) - known)},
        "results": results,
    }


def _tier_order(item: tuple[str, dict]) -> tuple[int, str]:
    return (TIERS.index(item[0]) if item[0] in TIERS else len(TIERS), item[0])
