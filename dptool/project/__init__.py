"""The dbt side: everything dptool knows of a user's dbt project, and the only code that talks to dbt.

dbt (the runner: every dbt call, `DbtProject`, connections) · batch (model texts compiled by dbt
in batches: the SQL dbt writes for each) · catalog (manifest.json -> typed tables, dimensions,
joins, metrics, rules) · declarations (the schema of `meta.dptool` and of the manifest: what each key holds) ·
semantic (the dbt semantic layer's metrics as dptool metrics) · selects (metrics that select members, and
those that state no window for it) · prepare (the start of a run: package check,
catalog, rule documents, semantic-layer models) · lock (one run at a time in a project or a run folder) ·
scaffold (`dptool init`, `dptool rule new`) · warehouse (queries on a DuckDB file) and adapter_warehouse (on any
target, through dbt's adapter).

May import: dptool.errors, dptool.sql. Nothing here imports generate, evaluate, llm, dp or cli.
"""
