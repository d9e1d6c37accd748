"""Reference agents that prove the scorer end to end: gold-sql, base-sql and empty.

gold-sql and base-sql run a task's stored SQL on the bundle's warehouse and derive the answer from
the rows with `dptool.generate.enrich.answer`, the very code that derived the gold. Both run base_sql and
gold_sql, because a threshold task's threshold is placed between the two answers; each then reports
its own variant. A task without SQL (knowledge retrieval) gets its gold passage from gold-sql and
no answer from base-sql. `empty` answers nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

from dptool.evaluate.score import load_tasks
from dptool.generate.enrich import NotScorable, answer
from dptool.generate.instantiate import Candidate
from dptool.generate.sample import Skeleton
from dptool.project.warehouse import Warehouse

AGENTS = ("gold-sql", "base-sql", "empty")


def candidate_of(task: dict, rows: list[tuple], columns: list[str]) -> Candidate:
    """The candidate a task was built from, as far as `enrich.answer` reads it (from the task's `spec`)."""
    fmt = task.get("answer_format") or {}
    spec = task.get("spec") or {}
    skeleton = Skeleton(task["metric_ids"][0], f"bundle.{task.get('dimension') or ''}", "categorical",
                        tuple(task.get("rule_ids") or ()), ())
    group_by = spec.get("group_by") or ([fmt["key"]] if fmt.get("key") else [])
    # the task does not record how its time column holds time; a trend's period values show it
    periods = [r[columns.index("period")] for r in rows] if "period" in columns else []
    encoding = "yymmdd" if any(isinstance(v, int | float | Decimal) for v in periods) else "timestamp"
    return Candidate(skeleton, task["analysis_type"], list(spec.get("where") or []), group_by,
                     spec.get("shape") or "", spec.get("k", fmt.get("k")), spec.get("min_rows"),
                     slice=task.get("slice") or {}, task_id=task["task_id"],
                     gold_rules=tuple(spec["rules"]) if "rules" in spec else None,
                     base_rules=tuple(spec.get("base_rules") or ()), period=spec.get("period"), encoding=encoding)


def reference_answer(task: dict, wh: Warehouse) -> dict[str, tuple[object, str]]:
    """{"gold": (answer, note), "base": (answer, note)}: what gold-sql and base-sql answer to one task."""
    if not task.get("gold_sql"):
        passage = task["gold"].get("passage") if isinstance(task.get("gold"), dict) else None
        return {"gold": (passage, "" if passage else "the task has no SQL"), "base": (None, "the task has no SQL")}
    rows, columns = [], ["variant"]
    for name in ("base", "gold"):
        cols, found = wh.query(task[f"{name}_sql"])
        columns = ["variant", *cols]
        rows += [(name, *r) for r in found]
    fmt = task.get("answer_format") or {}
    metric = SimpleNamespace(unit=fmt.get("unit", ""), format=fmt.get("format", "number"))
    try:
        result = answer(candidate_of(task, rows, columns), metric, columns, rows)
    except (NotScorable, ValueError) as exc:
        return {v: (None, f"no answer from the rows: {exc}") for v in ("gold", "base")}
    return {"gold": (result["gold"], ""), "base": (result["base"], "")}


def reference_records(bundle: str | Path, agents: tuple[str, ...], tasks: list[dict] | None = None,
                      on_done: Callable[[], None] = lambda: None) -> dict[str, list[dict]]:
    """Answer records ({"task_id", "answer"[, "note"]}) of reference agents, from one pass over the SQL.

    gold-sql and base-sql run the same two queries per task, so asking for both costs one pass. `tasks` are
    those to answer (default: every task of the bundle); `on_done()` is called after each.
    """
    unknown = [a for a in agents if a not in AGENTS]
    if unknown:
        raise ValueError(f"unknown reference agent {unknown[0]!r}")
    tasks = load_tasks(bundle) if tasks is None else tasks
    records: dict[str, list[dict]] = {agent: [] for agent in agents}
    variants = {agent: "gold" if agent == "gold-sql" else "base" for agent in agents if agent != "empty"}
    if not variants:  # the empty agent: every task done at once, with nothing
        for _ in tasks:
            on_done()
        return records
    with Warehouse(Path(bundle) / "warehouse.duckdb") as wh:
        for task in tasks:
            answers = reference_answer(task, wh)
            for agent, variant in variants.items():
                value, note = answers[variant]
                records[agent].append({"task_id": task["task_id"], "answer": value, **({"note": note} if note else {})})
            on_done()
    return records


def reference_answers(bundle: str | Path, agent: str, tasks: list[dict] | None = None,
                      on_done: Callable[[], None] = lambda: None) -> list[dict]:
    """One answer record per task; none for the empty agent."""
    return reference_records(bundle, (agent,), tasks, on_done)[agent]
