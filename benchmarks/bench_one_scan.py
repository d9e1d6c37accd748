"""What computing a gold answer's support in the gold's own statement would save on DuckDB: one scan, not two.

    .venv/bin/python benchmarks/bench_one_scan.py BUNDLE/warehouse.duckdb     # a bundle of the demo, any scale

A gold model computes the answer before and after the rules (two aggregates over the metric's rows in a window);
its support query counts, over the same rows, the rows and the distinct entities of each group. Run apart, the two
statements read the rows twice; in one statement (the rows a CTE both read, the support rows added with
`UNION ALL BY NAME`) DuckDB reads them once. Each shape below is timed three ways, best of five: the gold
statement alone, the support statement alone, and both in one. Where the aggregates, not the scan, cost the time,
one statement saves little.

Writes benchmarks/results/one-scan.json: per shape, the rows read, the seconds of each way and
`one_over_two` (one statement / the two apart).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from dptool.project.warehouse import duckdb_config  # noqa: E402

# (name, the metric's rows, the window, the group, the value, the entity, a rule's filter): shapes of the demo's gold
# models
SHAPES = [
    ("transactions by k_symbol, one year", "banking.trans", "date between 970101 and 971231", "k_symbol",
     "avg(amount)", "account_id", "amount < 50000"),
    ("transactions by type, all years", "banking.trans", "true", "type", "sum(amount)", "account_id",
     "operation is distinct from 'VKLAD'"),
    # an ephemeral model that joins is computed once per run into a table (Warehouse.query_shared): read from one
    ("order payments by type, one year", "paid_orders",
     "order_purchase_timestamp >= '2017-01-01' and order_purchase_timestamp < '2018-01-01'", "payment_type",
     "avg(payment_value)", "order_id", "payment_installments > 1"),
]
PREPARED = ("create temp table paid_orders as select p.*, o.order_purchase_timestamp from ecommerce.order_payments p "
            "join ecommerce.orders o using (order_id)")


def statements(rows: str, window: str, group: str, value: str, entity: str, rule: str) -> dict[str, str]:
    metric = f"m as (select * from {rows} where {window})"
    gold = (f"g as (select {group}, {value} as value from m where {rule} group by {group}), "
            f"b as (select {group}, {value} as value from m group by {group})")
    support = (f"s as (select {group}, count(*) as support_rows, count(distinct {entity}) as support_entities "
               f"from m group by {group})")
    answer = "select 'gold' as variant, * from g union all select 'base' as variant, * from b"
    return {
        "gold": f"with {metric}, {gold} {answer}",
        "support": f"with {metric}, {support} select * from s",
        "one": f"with {metric}, {gold}, {support} ({answer}) union all by name (select 'support' as variant, * from s)",
    }


def best(con: duckdb.DuckDBPyConnection, sql: str, runs: int = 5) -> float:
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        con.execute(sql).fetchall()
        seconds.append(time.perf_counter() - start)
    return min(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse", type=Path, help="a bundle's warehouse.duckdb")
    args = parser.parse_args()
    con = duckdb.connect(str(args.warehouse), read_only=True, config=duckdb_config())
    con.execute(PREPARED)
    out = []
    for name, rows, window, group, value, entity, rule in SHAPES:
        texts = statements(rows, window, group, value, entity, rule)
        (read,) = con.execute(f"select count(*) from {rows} where {window}").fetchone()
        seconds = {way: round(best(con, sql), 4) for way, sql in texts.items()}
        out.append({"shape": name, "rows_read": read, "seconds": seconds,
                    "one_over_two": round(seconds["one"] / (seconds["gold"] + seconds["support"]), 3)})
        print(f"{name:<40} {read:>10,} rows  gold {seconds['gold']:.4f} s + support {seconds['support']:.4f} s, "
              f"one statement {seconds['one']:.4f} s ({out[-1]['one_over_two']:.0%})")
    # the rows of the tables the shapes read: the scale the numbers are of
    rows = {t: con.execute(f"select count(*) from {t}").fetchone()[0]
            for t in ("banking.trans", "ecommerce.order_payments", "ecommerce.orders")}
    con.close()
    report = {"benchmark": "one-scan", "warehouse_rows": rows, "shapes": out, "cores": os.cpu_count(),
              "load_average": [round(x, 2) for x in os.getloadavg()]}
    path = REPO / "benchmarks" / "results" / "one-scan.json"
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"-> {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()
