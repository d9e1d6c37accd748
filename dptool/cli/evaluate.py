"""`dptool score`, `dptool answer` and `dptool eval`: scoring agents on a benchmark bundle."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from dptool.cli.interrupt import exit_interrupted
from dptool.cli.options import MAX_LLM_TIMEOUT, Finite, selection_options
from dptool.errors import DptoolError
from dptool.evaluate import limits
from dptool.outdir import check_file, check_files, open_run_folder, write_file
from dptool.project.lock import LOCK, hold

BUNDLE = click.argument("bundle", type=click.Path(exists=True, file_okay=False))
AGAINST = ("gold", "base")


def _echo_report(report: dict, paths: list[Path]) -> None:
    from dptool.evaluate.report import summary_lines

    for line in summary_lines(report):
        click.echo(line)
    for problem in report["answers_file"]["problems"]:
        click.echo(f"warning: answers file {problem}", err=True)
    unknown = report["answers_file"]["unknown_task_ids"]
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        click.echo(f"warning: answers file has {len(unknown)} task id{'s' if len(unknown) > 1 else ''} not in the "
                   f"bundle, not scored: {shown}", err=True)
    click.echo("wrote " + ", ".join(str(p) for p in paths))


def warn_stale_nodes(bundle: str, tasks: list[dict]) -> None:
    """Say which selected tasks' dbt_node no longer compute their gold in the project the bundle was made from."""
    from dptool.evaluate.drift import stale_nodes

    project, stale = stale_nodes(bundle, tasks)
    if stale:
        shown = "; ".join(f"{task_id}: {why}" for task_id, why in stale[:3])
        click.echo(f"warning: {len(stale)} of {len(tasks)} tasks' dbt_node no longer compute their gold in {project} "
                   f"({shown}{'; …' if len(stale) > 3 else ''}); their golds stand as the bundle has them: "
                   f"`dptool generate --refresh {bundle}` makes them anew", err=True)


@click.command("score")
@BUNDLE
@click.argument("answers", type=click.Path())
@click.option("--out", default="score", show_default=True, type=click.Path(file_okay=False),
              help="Folder for score.json, score.md and report.html.")
@click.option("--against", type=click.Choice(AGAINST), default="gold", show_default=True,
              help="Compare with each task's gold answer, or with its answer under no rule (the no-rule condition: "
                   "the base, a counterfactual's rule_free).")
@click.option("--shared-ids", is_flag=True,
              help="Answers made on another bundle (their fingerprint says so): score the tasks of this bundle they "
                   "answer, by id, instead of refusing them.")
@selection_options
def score_command(bundle, answers, out, against, shared_ids, selection):
    """Score an answers file, or a run folder, against a bundle's gold answers.

    ANSWERS is JSONL (task_id, answer as JSON or text, optional transcript), or a run folder holding
    answers.jsonl and run.json. Accuracy is over every task selected, a task without an answer counting as
    wrong, with its 95 % Wilson interval over tasks, then coverage and the accuracy over the answered; by
    analysis type, tier, rule type, domain, metric and rule. A run of k attempts per task (records' "attempt",
    run.json's "epochs") reports pass@1 and pass^k. Wrong answers are classed: "rules not applied" (the answer
    under no rule), "withdrawn rule still applied" (a counterfactual answered with every rule), "truncated"
    (fewer rows than asked), else the comparison's reason. Answers made on another bundle are refused (see
    --shared-ids).
    """
    from dptool.evaluate.report import REPORT_FILES, write_reports
    from dptool.evaluate.score import as_run, check_bundle, load_run, load_tasks, score

    check_files(out, list(REPORT_FILES))  # before any work: a report of the user's is never overwritten
    given = load_run(answers)
    ran = given.run
    default = click.get_current_context().get_parameter_source("against") is click.core.ParameterSource.DEFAULT
    # a run folder: the tasks it ran, as its condition ran and scores them
    every = load_tasks(bundle)
    tasks, against, selection = as_run(every, given, selection, None if default else against)
    tasks = check_bundle(given, bundle, tasks, shared_ids)
    given.set_aside({t["task_id"] for t in every}, {t["task_id"] for t in tasks})  # not selected: no strangers
    if not selection.everything:
        click.echo(f"selection: {selection.describe()}{' (as the run ran)' if ran else ''}: {len(tasks)} tasks")
    report = score(tasks, given, against=against, bundle_ids={t["task_id"] for t in every})
    paths = write_reports(report, out, title=f"{Path(answers).name} on {Path(bundle).name}")
    _echo_report(report, paths)
    warn_stale_nodes(bundle, tasks)


@click.command("answer")
@BUNDLE
@click.option("--agent", type=click.Choice(["gold-sql", "base-sql", "empty"]), required=True,
              help="gold-sql runs each task's gold_sql, base-sql its base_sql, empty answers nothing.")
@click.option("--out", default="answers.jsonl", show_default=True, type=click.Path(dir_okay=False),
              help="The answers file to write (JSONL).")
@selection_options
def answer_command(bundle, agent, out, selection):
    """Answer the tasks with a reference agent (gold-sql, base-sql, empty).

    The reference answers prove the scorer end to end: gold-sql must score 100 %, base-sql 0 % on
    rule tasks. Each record carries the bundle's fingerprint.
    """
    from dptool.bundle import fingerprint
    from dptool.evaluate.reference import reference_answers
    from dptool.evaluate.score import load_tasks

    check_file(out)  # before any work: only an answers file dptool wrote is replaced, never one inside a bundle
    tasks = selection.apply(load_tasks(bundle))
    warn_stale_nodes(bundle, tasks)
    fp = fingerprint(bundle)
    # a stage line first, as generate's: the run takes a minute on the demo, and the bar is a label alone off a terminal
    click.echo(f"[answer] {agent} on {len(tasks)} tasks of {bundle}" + (
        ": each task's base_sql and gold_sql run on the bundle's warehouse" if agent != "empty" else ""))
    with click.progressbar(length=len(tasks), label=f"  {agent}", file=sys.stderr) as bar:
        records = reference_answers(bundle, agent, tasks, on_done=lambda: bar.update(1))
    write_file(out, "".join(json.dumps({**record, "bundle": fp}, sort_keys=True, ensure_ascii=False) + "\n"
                            for record in records))
    missing = sum(1 for r in records if r["answer"] is None)
    click.echo(f"{agent}: {len(records) - missing} answers, {missing} empty, of {len(tasks)} tasks -> {out}")


@click.command("eval")
@BUNDLE
@click.option("--model", required=True,
              help="The model: ollama:NAME (e.g. ollama:qwen2.5:7b), or openai:MODEL at any OpenAI-compatible "
                   "chat-completions endpoint (--base-url).")
@click.option("--condition", type=click.Choice(["standard", "oracle", "no-rule"]), default="standard",
              show_default=True, help="oracle gives the task's rule documents; no-rule hides them and scores "
              "against base. Both run the rule-grounded analytics tasks only, as DI-Bench's Table 5.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Run folder (answers.jsonl, transcripts/, reports). Default: runs/<model>-<condition>.")
@click.option("--max-turns", default=20, show_default=True, type=click.IntRange(1, 100),
              help="LLM calls per task.")
@click.option("--sql-timeout", default=10.0, show_default=True, type=Finite(*limits.TIMEOUT),
              help="Seconds a run_sql query may take, parsing included; then it is stopped.")
@click.option("--sql-memory", default=1024, show_default=True, type=click.IntRange(*limits.MEMORY_MB),
              help="Megabytes a run_sql query may use; over it the query fails and the agent is told.")
@click.option("--max-rows", default=100, show_default=True, type=click.IntRange(*limits.MAX_ROWS),
              help="Rows run_sql returns at most.")
@click.option("--ollama-host", envvar="OLLAMA_HOST", default=None,
              help="Ollama's URL. Default: $OLLAMA_HOST, then http://127.0.0.1:11434.")
@click.option("--base-url", envvar="OPENAI_BASE_URL", default=None, metavar="URL",
              help="The OpenAI-compatible endpoint of openai:MODEL, e.g. http://127.0.0.1:8000/v1 (vLLM), "
                   "http://127.0.0.1:11434/v1 (Ollama). Default: $OPENAI_BASE_URL, then https://api.openai.com/v1.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, metavar="NAME",
              help="The environment variable holding the endpoint's key (none sent when it is unset).")
@click.option("--llm-timeout", default=300.0, show_default=True, type=Finite(1, MAX_LLM_TIMEOUT),
              help="Seconds one model reply may take (local models on a CPU are slow).")
@click.option("--epochs", default=1, show_default=True, type=click.IntRange(1, 100),
              help="Attempts per task: each task is answered this many times, and the score reports pass@1 and "
                   "pass^k (every attempt right) beside accuracy.")
@click.option("--limit", default=None, type=click.IntRange(1), hidden=True,
              help="Replaced by --sample (a stratified sample, not the first N tasks).")
@selection_options
def eval_command(bundle, model, condition, out, max_turns, sql_timeout, sql_memory, max_rows, ollama_host,
                 base_url, api_key_env, llm_timeout, epochs, limit, selection):
    """Run the built-in agent with a model (Ollama's, or any OpenAI-compatible endpoint's) over a bundle, then
    score it.

    The agent has two tools, run_sql (the read-only warehouse) and search_kb (BM25 over kb/).

    Answers are appended attempt by attempt to OUT/answers.jsonl with a transcript each; run the same
    command again after an interruption and it goes on with the (task, attempt) pairs not yet answered.
    """
    from dataclasses import replace

    from dptool.evaluate.agent import (
        Agent,
        Settings,
        finished_attempts,
        pending,
        prepare_run,
        run_tasks,
        select_tasks,
        tasks_digest,
    )
    from dptool.evaluate.report import write_reports
    from dptool.evaluate.score import load_run, score
    from dptool.llm.client import LLM
    from dptool.llm.openai_chat import OpenAIChat

    provider, _, name = model.partition(":")
    if provider not in ("ollama", "openai") or not name:
        raise DptoolError(f"--model {model!r}: expected ollama:NAME or openai:MODEL, e.g. ollama:qwen2.5:7b")
    if limit is not None:  # the first N tasks were all knowledge tasks: a stratified sample stands for the bundle
        if selection.sample is not None:
            raise DptoolError("--limit is --sample now: give --sample alone")
        selection = replace(selection, sample=limit)
    if provider == "openai":
        llm = OpenAIChat(name, base_url, api_key_env=api_key_env, timeout=llm_timeout)
    else:
        llm = LLM(name, host=ollama_host, timeout=llm_timeout)
    settings = Settings(model=llm.name, condition=condition, max_turns=max_turns, sql_timeout=sql_timeout,
                        sql_memory_mb=sql_memory, max_rows=max_rows, tasks_sha256=tasks_digest(bundle),
                        selection=selection.as_dict(), epochs=epochs)
    prefix = "openai_" if provider == "openai" else ""
    out = Path(out or Path("runs") / f"{prefix}{llm.model.replace(':', '_').replace('/', '_')}-{condition}")
    tasks = select_tasks(bundle, condition, selection)
    open_run_folder(out, create=False)  # new, or a run folder dptool made holding nothing else
    llm.ensure_model()  # an unreachable server or a model not pulled stops the run before it writes anything
    open_run_folder(out)
    click.get_current_context().with_resource(hold(out / LOCK, f"dptool eval {bundle}", "run folder"))  # one run
    prepare_run(out, settings)
    todo = pending(tasks, epochs, finished_attempts(out / "answers.jsonl"))
    unit = "tasks" if epochs == 1 else "attempts"
    click.echo(f"{llm.name} at {llm.host}, condition {condition}: {len(todo)} {unit} to run"
               f"{'' if epochs == 1 else f' ({len(tasks)} tasks × {epochs})'}, "
               f"{len(tasks) * epochs - len(todo)} already answered in {out}")
    count, invalid = 0, 0
    try:
        with Agent(llm, bundle, settings) as agent, \
                click.progressbar(length=len(todo), label=f"  {unit}", file=sys.stderr) as bar:
            def step(transcript):
                nonlocal count, invalid
                count += 1
                invalid += transcript.get("invalid_text", 0)
                bar.update(1)

            run_tasks(agent, todo, out, on_done=step)
    except KeyboardInterrupt:
        # answers so far are on disk: the generic handler's "nothing was written" would be wrong here
        exit_interrupted(f"\nerror: interrupted after {count} of {len(todo)} {unit}; answers so far are in "
                         f"{out / 'answers.jsonl'}; run the same command again to resume")
    except DptoolError as exc:
        raise DptoolError(f"{exc} ({count} of {len(todo)} {unit} done; run the same command again to "
                          "resume)") from None
    if invalid:
        click.echo(f"warning: the model's replies held {invalid} lone surrogate{'s' if invalid > 1 else ''} (half a "
                   "character, not Unicode); each was replaced by U+FFFD before use and in the transcripts", err=True)
    against = "base" if condition == "no-rule" else "gold"
    answers = load_run(out)
    answers.only({t["task_id"] for t in tasks})
    report = score(tasks, answers, against=against, epochs=epochs)
    paths = write_reports(report, out, title=f"{llm.name}, {condition} condition")
    _echo_report(report, paths)


COMMANDS = [score_command, answer_command, eval_command]
