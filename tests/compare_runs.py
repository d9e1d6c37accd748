"""Runs to compare, for compare.html's tests: a bundle of many tasks (tasks.jsonl only: scoring reads no warehouse)
whose ids, analysis types, metrics and rules are as long as a real project's, and two answers files that flip
a known set of its tasks both ways."""

from __future__ import annotations

import json
from pathlib import Path

TYPES = ("decomposition", "point_query", "threshold_crossing", "counterfactual", "period_over_period")
METRICS = ("average_order_value", "freight_to_price_ratio_by_seller_state", "monthly_recurring_revenue")
RULES = ("refunds_excluded_from_revenue", "test_accounts_excluded", "late_fees_capped_at_contract_value")


def task(i: int) -> dict:
    kind = TYPES[i % len(TYPES)]
    rules = [RULES[i % len(RULES)], *([RULES[(i + 1) % len(RULES)]] if i % 4 == 0 else [])] if i % 3 else []
    return {"task_id": f"{kind[:3]}_{i:04x}a5{i % 97:02d}", "analysis_type": kind, "domain": "shop",
            "tier": "knowledge+analytics+rule" if rules else "knowledge+analytics",
            "question": f"What was the {METRICS[i % len(METRICS)].replace('_', ' ')} in month {i}?",
            "answer_format": {"type": "value", "format": "number"}, "gold": {"value": 100.0 + i},
            "base": {"value": 200.0 + i}, "tolerance": {"rel_tol": 0.001}, "metric_ids": [METRICS[i % len(METRICS)]],
            "rule_ids": rules, "rules_in_force": rules, "rule_types": ["exclusionary"] if rules else []}


def right_in_a(i: int) -> bool:
    return i % 5 != 1


def right_in_b(i: int) -> bool:
    return i % 7 != 2


def write(folder: Path, n: int) -> tuple[Path, Path, Path]:
    """The bundle of `n` tasks and the answers files a.jsonl and b.jsonl: a is wrong on tasks i % 5 == 1 (with
    the rule-free answer), b on i % 7 == 2 (with a value that is nobody's)."""
    bundle = folder / "bundle"
    bundle.mkdir(parents=True)
    tasks = [task(i) for i in range(n)]
    (bundle / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    paths = []
    for name, right, wrong in (("a", right_in_a, lambda t: t["base"]), ("b", right_in_b, lambda t: {"value": -1})):
        path = folder / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"task_id": t["task_id"], "answer": t["gold"] if right(i) else wrong(t)})
                                + "\n" for i, t in enumerate(tasks)), encoding="utf-8")
        paths.append(path)
    return bundle, *paths
