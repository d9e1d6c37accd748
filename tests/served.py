"""A bundle of a few point-query tasks over a real DuckDB file, made in place, for tests of `dptool serve`'s task
flow (no dbt, no demo): each task's gold, base, SQL and rule scope are there, for what no reply may reveal."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import duckdb
from mcp import StdioServerParameters

RULE_TIER = "knowledge+analytics+rule"


def tiny_bundle(root: Path, n: int = 2) -> Path:
    """ROOT/bundle with tasks pq_1 .. pq_N, a warehouse (shop.orders, 10 rows) and a kb of one metric, one rule."""
    bundle = root / "bundle"
    (bundle / "kb" / "rules").mkdir(parents=True)
    with duckdb.connect(str(bundle / "warehouse.duckdb")) as con:
        con.execute("create schema shop; create table shop.orders (id integer, amount decimal(10, 2)); "
                    "insert into shop.orders select range, range * 1.5 from range(10)")
    (bundle / "kb" / "metrics.md").write_text(
        "# Metric catalog\n\n## Revenue\n\n- Domain: shop\n- Formula: SUM(amount)\n- Unit: USD (currency)\n"
        "- Policies: Refund Exclusion (`rules/refunds.md`)\n\nRevenue — what customers paid.\n", encoding="utf-8")
    (bundle / "kb" / "rules" / "refunds.md").write_text(
        "# Refund Exclusion\n\nRefunded orders leave revenue: their amount is not counted, whatever the period "
        "and whatever the channel the order was placed in, because the money went back to the customer.\n",
        encoding="utf-8")
    tasks = [{"task_id": f"pq_{i}", "domain": "shop", "analysis_type": "point_query", "tier": RULE_TIER,
              "question": f"What was revenue number {i}?", "answer_format": {"type": "value", "format": "number"},
              "gold": {"value": 61.25 + i}, "base": {"value": 67.5 + i}, "gold_sql": f"select {61.25 + i} as value",
              "base_sql": f"select {67.5 + i}", "rule_ids": ["refunds"], "rules_in_force": ["refunds"],
              "rule_scope": "all", "tolerance": {"rel_tol": 0.001}, "dbt_node": f"model.shop.pq_{i}",
              "spec": {"where": ["status <> 'refunded'"]}} for i in range(1, n + 1)]
    (bundle / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    return bundle


def serve_params(bundle: Path, out: Path, *args: str) -> StdioServerParameters:
    """`dptool serve` as an MCP client starts it: a subprocess speaking MCP on its stdin and stdout."""
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "dptool.cli", "serve", str(bundle), "--out", str(out), *args],
                                 env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")})


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def serve_http(bundle: Path, out: Path, *args: str, env: dict[str, str] | None = None,
               stdout=subprocess.PIPE) -> tuple[subprocess.Popen, int]:
    """`dptool serve --http` on a free loopback port, once it listens: (its process, the port). A server that ends
    or does not listen within 120 s is a RuntimeError holding what it printed on stderr."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "dptool.cli", "serve", str(bundle), "--http", "--port", str(port),
                             "--out", str(out), *args], stdout=stdout, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"dptool serve --http did not start: {proc.communicate()[1]}") from None
            time.sleep(0.05)
