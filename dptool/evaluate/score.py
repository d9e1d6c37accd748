"""Scoring a run: every answer compared with its task's gold (dptool.answers), accuracy by group (DESIGN §4)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dptool.answers import DuplicateKeys, Malformed, compare, read_json
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
    """Answers by task id (the last line of a task counts) and what was wrong with the file."""

    by_task: dict[str, Any]
    problems: list[str]


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
            if "answer" in twice:
                problems.append(f"line {i}: the key 'answer' twice (the answer is malformed)")
                answer = Malformed("malformed answer: the key 'answer' twice in its record")
            if task_id in by_task:
                problems.append(f"line {i}: a second answer for {task_id} (the last one counts)")
            by_task[task_id] = answer
    return Answers(by_task, problems)


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
    return {
        "against": against,
        "overall": {**_cell([r["correct"] for r in results]), "answered": sum(r["answered"] for r in results)},
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
