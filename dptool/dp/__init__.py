"""Data products (DP-Bench): column lineage as provenance, DP-Bench JSON, scoring and the baselines.

One concept per module: lineage (sqlglot column lineage of one model), dpjson (the DP-Bench JSON shape),
products (data products read from dbt's artifacts), provenance (lineage written where dbt docs show it),
yamlio (the properties files dptool writes), reads (what a SQL text over a database reads), score (DP-Bench
§5), baselines (no search, hybrid search, LLM), create (a DP written as dbt models) and bench (the results
table); the `dptool dp` commands are in dptool.cli.dp.

May import: dptool.project, dptool.llm (the client), dptool.sql, dptool.outdir, dptool.errors.
"""
