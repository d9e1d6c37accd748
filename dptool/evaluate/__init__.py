"""Evaluating agents on a bundle: `dptool score`, `answer`, `eval`, `compare`, `serve`, the inspect task.

score (a run's accuracy by type, tier, rule type, domain, metric and rule; each answer compared by dptool.answers) ·
intervals (Wilson intervals over tasks, pass^k) · failures (why an answer is wrong: rules not applied,
withdrawn rule still applied, truncated, …) · compare (a leaderboard of runs on one bundle) ·
sandbox (the read-only, time- and memory-limited SQL tool) · sql_check (its parser wall) · sql_worker (the
processes that run its queries) · kb (BM25 over the bundle's kb/) · limits (the ranges of the tools' limits) ·
agent (the tool-calling loop over an LLM) · reference (gold-sql, base-sql and empty agents) · report (score.md,
report.html) · answers_file (an answers file or run folder read with every count bounded) · environment (the tools
served to the user's own agent) · served_run (its task flow: attempts handed out and answered once, every call
recorded) · run_folder (the run folder as the single source of truth, under one lock) · env_pool (an environment per
open attempt) · bundle_watch (a bundle replaced under a server) · stdio_screen (requests the SDK cannot read) ·
serve (the environment as an MCP server) · inspect_task (as an inspect-ai task) · inspect_log (an inspect eval log
as a run folder).

May import: dptool.answers, dptool.bundle (fingerprints), dptool.llm (the client), dptool.generate (reference
agents derive answers from rows with the code that derived the gold), dptool.project, dptool.outdir (the reports
are written as every file dptool writes), dptool.files (file names and JSON text from data), dptool.errors.
Nothing in generate imports it.
"""
