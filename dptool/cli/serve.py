"""`dptool serve` (a bundle as an MCP server for the user's own agent) and `dptool inspect-import` (an inspect-ai
eval log as a run folder)."""

from __future__ import annotations

import contextlib
import ipaddress
import shlex
from pathlib import Path

import click

from dptool.cli.options import Finite, selection_options
from dptool.errors import DptoolError
from dptool.evaluate import limits
from dptool.outdir import RUN, check_replaceable, open_run_folder

BUNDLE = click.argument("bundle", type=click.Path(exists=True, file_okay=False))


def sql_limit_options(f):
    """--sql-timeout, --sql-memory, --max-rows, as `dptool eval` has them."""
    f = click.option("--max-rows", default=100, show_default=True, type=click.IntRange(*limits.MAX_ROWS),
                     help="Rows execute_sql returns at most.")(f)
    f = click.option("--sql-memory", default=1024, show_default=True, type=click.IntRange(*limits.MEMORY_MB),
                     help="Megabytes a query may use; over it the query fails and the agent is told.")(f)
    return click.option("--sql-timeout", default=10.0, show_default=True, type=Finite(*limits.TIMEOUT),
                        help="Seconds a query may take, parsing included; then it is stopped.")(f)


@click.command("serve")
@BUNDLE
@click.option("--http", is_flag=True, help="Serve over streamable HTTP at http://HOST:PORT/mcp instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on with --http.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port of --http.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Run folder (run.json, answers.jsonl, transcripts/). Default: runs/serve-<bundle fingerprint>.")
@click.option("--task", "task_id", default=None, metavar="ID",
              help="Hand out this one task only (for harnesses that start one server per sample); several such "
                   "servers may share one --out.")
@click.option("--epochs", default=1, show_default=True, type=click.IntRange(1),
              help="Attempts per task: each task is handed out this many times (every task once, then again).")
@click.option("--model", default=None, metavar="NAME",
              help="What is being benchmarked (free text, e.g. claude-sonnet-4 in Claude Code); kept in run.json.")
@sql_limit_options
@selection_options
def serve_command(bundle, http, host, port, out, task_id, epochs, model, sql_timeout, sql_memory, max_rows,
                  selection):
    """Serve a bundle to your own agent as an MCP server (stdio, or streamable HTTP with --http).

    The agent gets the benchmark's environment and nothing else: execute_sql (one read-only query on the
    bundle's warehouse, through the same sandbox as `dptool eval`), get_all_models, get_model_details,
    list_metrics, search_kb and get_kb_document; next_task hands out a task (its id, question, answer format
    and attempt_id) and submit_answer(task_id, answer, attempt_id) takes the answer, once. Every call is
    recorded per attempt in the run folder, which `dptool score BUNDLE OUT` scores; several agents may share
    one server over HTTP (each MCP session has its own task), several servers one folder; a server started
    again on the same folder goes on with the attempts not yet answered.
    """
    from dptool.bundle import fingerprint, short
    from dptool.evaluate.environment import Environment, Limits
    from dptool.evaluate.score import load_tasks
    from dptool.evaluate.served_run import ServedRun

    try:
        from dptool.evaluate.serve import serve, stopped
    except ImportError as exc:  # a broken or foreign `mcp` package
        raise DptoolError(f"dptool serve needs the mcp package 2.x ({exc}); pip install 'mcp>=2.3,<3'") from None
    tasks = selection.apply(load_tasks(bundle))
    if task_id is not None:
        scoped = [t for t in tasks if t["task_id"] == task_id]
        if not scoped:
            raise DptoolError(f"--task {task_id}: no task of the selection ({selection.describe()}) has this id")
        tasks = scoped
    out = Path(out or Path("runs") / f"serve-{short(fingerprint(bundle))}")
    open_run_folder(out)  # new, or a run folder dptool made holding nothing else (several servers may share it)
    settings = {"selection": selection.as_dict(), **({"model": model} if model else {})}
    _warn_if_exposed(http, host)
    with Environment(bundle, Limits(sql_timeout, sql_memory, max_rows)) as env:
        run = ServedRun(env, tasks, out, epochs=epochs, settings=settings)
        where = f"http://{host}:{port}/mcp" if http else "stdio"
        # stdout is the MCP channel on stdio: what a person reads goes to stderr
        click.echo(f"dptool serve: {len(tasks)} tasks × {epochs} attempt{'s' if epochs > 1 else ''}, "
                   f"{run.progress()}; run folder {out}; MCP over {where}", err=True)
        try:
            with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends an HTTP server: the run stays resumable
                serve(run, http=http, host=host, port=port)
        finally:
            run.close()
        if run.stale:
            raise DptoolError(stopped(run))
        click.echo(f"dptool serve: stopped; {run.progress()}; score it with: "
                   f"{shlex.join(['dptool', 'score', bundle, str(out), *selection_flags(selection)])}", err=True)


def selection_flags(selection) -> list[str]:
    """The options that select the same tasks (for the `dptool score` command a server suggests)."""
    flags = ["--tasks", ",".join(selection.tasks)] if selection.tasks else []
    for option, values in (("--type", selection.types), ("--domain", selection.domains), ("--tier", selection.tiers)):
        flags += [option, ",".join(values)] if values else []
    if selection.sample:
        flags += ["--sample", str(selection.sample)] + (["--seed", str(selection.seed)] if selection.seed != 42 else [])
    return flags


def _warn_if_exposed(http: bool, host: str) -> None:
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if http and not loopback:
        click.echo(f"warning: listening on {host}: whoever reaches this port can run queries on the warehouse and "
                   "submit answers to the run", err=True)


@click.command("inspect-import")
@click.argument("log", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="The run folder to write (new or empty): run.json, answers.jsonl, transcripts/.")
@click.option("--allow-incomplete", is_flag=True,
              help="Import a log that errored or was interrupted (refused otherwise); run.json then says "
                   '"complete": false.')
def inspect_import_command(log, out, allow_incomplete):
    """Turn an inspect-ai eval log of the dptool task into a run folder that `dptool score` reads.

    Each sample's epoch is its attempt; its answer is what the task's scorer compared, its transcript the
    sample's messages. A sample that ended on an error or a limit has no answer.
    """
    from dptool.evaluate.inspect_log import import_log

    check_replaceable(out, RUN)  # before any work: never a folder of the user's, nor one inside a bundle
    summary = import_log(Path(log), Path(out), allow_incomplete=allow_incomplete)
    click.echo(summary)


COMMANDS = [serve_command, inspect_import_command]
