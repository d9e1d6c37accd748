"""`dptool generate --refresh OLD`: what changed since OLD was generated — golds changed, tasks dropped
(and why: a rule that no longer changes the answer, a build failure, no longer selected), tasks added."""

from __future__ import annotations

import json
from pathlib import Path

from dptool.errors import DptoolError


def task_key(analysis_type: str, metric: str, rules, dimension, slice_: dict) -> str:
    """What identifies a task across runs: its type, metric, rules, dimension and slice (not its id)."""
    return json.dumps([analysis_type, metric, sorted(rules), dimension, slice_], sort_keys=True, ensure_ascii=False)


def key_of(task: dict) -> str:
    where = task["slice"]
    if task["analysis_type"] == "knowledge_retrieval":
        # a rule document gives several knowledge tasks: what it changes, and when it takes effect
        asks = (task.get("answer_format") or {}).get("asks")
        where = {"subgraph": task["subgraph_id"], **({"asks": asks} if asks else {})}
    return task_key(task["analysis_type"], task["metric_ids"][0] if task["metric_ids"] else "", task["rule_ids"],
                    task["dimension"], where)


def read_tasks(bundle: str | Path) -> list[dict]:
    path = Path(bundle) / "tasks.jsonl"
    if not path.is_file():
        raise DptoolError(f"{path}: no tasks.jsonl; --refresh needs a bundle written by `dptool generate`")
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise DptoolError(f"{path}: line {exc.lineno} is not JSON") from None


def diff(old: list[dict], new: list[dict], reasons: dict[str, str]) -> dict:
    """Changed golds, dropped tasks with the reason, added tasks; each sorted by the old or new id."""
    old_by_key = {key_of(t): t for t in old}
    new_by_key = {key_of(t): t for t in new}
    changed = [{"old_id": o["task_id"], "new_id": new_by_key[k]["task_id"], "question": new_by_key[k]["question"],
                "old_gold": o["gold"], "new_gold": new_by_key[k]["gold"]}
               for k, o in old_by_key.items() if k in new_by_key and new_by_key[k]["gold"] != o["gold"]]
    dropped = [{"old_id": o["task_id"], "question": o["question"],
                "reason": reasons.get(k, "no longer selected (metrics, rules or data changed the sample)")}
               for k, o in old_by_key.items() if k not in new_by_key]
    added = [{"new_id": t["task_id"], "question": t["question"]} for k, t in new_by_key.items() if k not in old_by_key]
    return {
        "unchanged": sum(1 for k, o in old_by_key.items() if k in new_by_key and new_by_key[k]["gold"] == o["gold"]),
        "changed": sorted(changed, key=lambda r: r["old_id"]),
        "dropped": sorted(dropped, key=lambda r: r["old_id"]),
        "added": sorted(added, key=lambda r: r["new_id"]),
    }


def markdown(d: dict, old_bundle: str) -> str:
    lines = ["# Refresh", "", f"Compared with `{old_bundle}`: {d['unchanged']} unchanged, {len(d['changed'])} with a "
             f"new gold, {len(d['dropped'])} dropped, {len(d['added'])} added.", ""]
    if d["changed"]:
        lines += ["## Gold changed", "", "| old | new | question | old gold | new gold |",
                  "| --- | --- | --- | --- | --- |"]
        lines += [f"| {r['old_id']} | {r['new_id']} | {r['question']} | `{json.dumps(r['old_gold'])[:80]}` | "
                  f"`{json.dumps(r['new_gold'])[:80]}` |" for r in d["changed"]]
        lines.append("")
    if d["dropped"]:
        lines += ["## Dropped", "", "| old | reason | question |", "| --- | --- | --- |"]
        lines += [f"| {r['old_id']} | {r['reason']} | {r['question']} |" for r in d["dropped"]]
        lines.append("")
    if d["added"]:
        lines += ["## Added", "", "| new | question |", "| --- | --- |"]
        lines += [f"| {r['new_id']} | {r['question']} |" for r in d["added"]]
        lines.append("")
    return "\n".join(lines)
