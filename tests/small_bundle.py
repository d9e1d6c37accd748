"""A small benchmark bundle written as `dptool generate` writes one (dptool.outdir's staging and publish), for tests
of what reads a bundle (answer, score, eval, ablate) that need no dbt project: two tasks over a real DuckDB file."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from dptool.outdir import BUNDLE, publish, staging_folder

TOL = {"rel_tol": 0.001, "abs_tol": 0.005}
TASKS = [
    {"task_id": "t_0001", "analysis_type": "point_query", "tier": "knowledge+analytics+rule", "domain": "shop",
     "question": "What is the average order value under every policy?", "rule_types": ["exclusionary"],
     "rule_ids": ["refunds_excluded"], "metric_ids": ["aov"], "answer_format": {"type": "value"},
     "gold": {"value": 42.0}, "base": {"value": 40.0}, "tolerance": TOL,
     "gold_sql": "select 'gold' as variant, avg(amount) + 39 as value from shop.orders",
     "base_sql": "select 'base' as variant, avg(amount) + 37 as value from shop.orders"},
    {"task_id": "t_0002", "analysis_type": "point_query", "tier": "knowledge+analytics", "domain": "shop",
     "question": "How many orders are there?", "rule_types": [], "rule_ids": [], "metric_ids": ["orders"],
     "answer_format": {"type": "value"}, "gold": {"value": 3.0}, "base": {"value": 3.0}, "tolerance": TOL,
     "gold_sql": "select 'gold' as variant, count(*) as value from shop.orders",
     "base_sql": "select 'base' as variant, count(*) as value from shop.orders"},
]


def write_bundle(out: Path) -> Path:
    """A bundle at `out` (tasks.jsonl, warehouse.duckdb, kb/, card.md, graph.json) with dptool's marker."""
    out = out.resolve()
    tmp = staging_folder(out)
    con = duckdb.connect(str(tmp / "warehouse.duckdb"))
    con.execute("create schema shop")
    con.execute("create table shop.orders as select * from (values (1, 2.0), (2, 3.0), (3, 4.0)) t(id, amount)")
    con.close()
    (tmp / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TASKS), encoding="utf-8")
    (tmp / "kb" / "rules").mkdir(parents=True)
    (tmp / "kb" / "rules" / "refunds_excluded.md").write_text("# Refunds excluded\n\nRefunded orders leave the "
                                                              "average order value.\n", encoding="utf-8")
    (tmp / "kb" / "metrics.md").write_text("# Metric catalog\n\n## Average order value\n", encoding="utf-8")
    (tmp / "card.md").write_text("# Benchmark card\n\n2 tasks\n", encoding="utf-8")
    (tmp / "graph.json").write_text("{}\n", encoding="utf-8")
    return publish(tmp, out, BUNDLE)
