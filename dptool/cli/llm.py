"""The LLM options of `dptool generate`, and the commands `dptool link` and `dptool judge-agreement`."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import click

from dptool.cli.options import MAX_LLM_TIMEOUT, Finite, project_options
from dptool.errors import DptoolError
from dptool.outdir import check_file, write_file
from dptool.progress import progressbar

# a rule document, the metric catalog and a gold SQL query do not fit Ollama's default 2,048-token window
LLM_OPTIONS = {"num_ctx": 8192}


def llm_options(f):
    """--llm, --ollama-host and --llm-timeout."""

    @click.option("--llm", default=None, metavar="ollama:NAME",
                  help="The model of the LLM stages, e.g. ollama:qwen2.5:7b; `none` turns them off. "
                       "Default: $DPTOOL_LLM, then vars: {dptool: {llm: ...}} in dbt_project.yml, else none.")
    @click.option("--ollama-host", envvar="OLLAMA_HOST", default=None,
                  help="Ollama's URL. Default: $OLLAMA_HOST, then http://127.0.0.1:11434.")
    @click.option("--llm-timeout", default=300.0, show_default=True, type=Finite(0.1, MAX_LLM_TIMEOUT),
                  help="Seconds one model reply may take (local models on a CPU are slow).")
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)

    return wrapper


def configured_llm(flag: str | None, project_dir: str, host: str | None, timeout: float):
    """The client the options and the project configure, or None: replies cached in target/dptool_llm_cache/."""
    from dptool.llm.client import project_llm, resolve_spec

    spec, _ = resolve_spec(flag, project_dir)
    if spec is None:
        return None
    return project_llm(spec, project_dir, host=host, timeout=timeout, options=LLM_OPTIONS)


def _usage_line(llm, stages: tuple[str, ...]) -> str:
    parts = []
    for stage in stages:
        u = llm.usage.get(stage)
        if u is None:
            continue
        prompt_tokens, completion_tokens = u.tokens
        parts.append(f"{stage} {u.requests} ({u.cache_hits} from the cache), "
                     f"{prompt_tokens + completion_tokens} tokens")
    return "; ".join(parts) or "no requests"


def echo_llm_summary(llm, review) -> None:
    click.echo(f"{llm.name} requests: " + _usage_line(llm, ("phrase", "judge", "rewrite")))
    if review is not None:
        c = review.counts
        click.echo(f"judge: {c['judged']} judged, {c['admitted']} admitted ({c['admitted_after_rewrite']} after a "
                   f"rewrite), {c['rejected_by_judge']} rejected; {c['rewritten']} rewritten; see judge.jsonl")


def _require(llm, command: str):
    if llm is None:
        raise DptoolError(f"dptool {command} needs an LLM: pass --llm ollama:NAME (e.g. ollama:qwen2.5:7b), or set "
                          "$DPTOOL_LLM or vars: {dptool: {llm: ...}} in dbt_project.yml")
    return llm


@click.command("link")
@project_options
@llm_options
@click.option("--rule", "rule_ids", multiple=True, help="Only this rule (its id, without rule__); repeatable.")
@click.option("--domain", default=None, help="Only the rules of this domain.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Folder of the suggestions. Default: <project>/target/dptool_link.")
def link_command(project_dir, profiles_dir, dbt_target, llm, ollama_host, llm_timeout, rule_ids, domain, out):
    """Propose rule -> metric links from the rule documents with an LLM, and verify each by executing it.

    For each rule document the model proposes the metrics it modifies, the dimension values it depends
    on and the SQL change; each proposal is built with dbt as a draft rule macro (temporary files,
    removed afterwards) to see whether the metric's answer changes. Writes suggestions for review
    (OUT/<rule>.sql, report.json, report.md) with precision and recall against the declared links;
    nothing in the project is changed.
    """
    from dptool.generate.link import markdown, run_link
    from dptool.llm.client import load_prompt
    from dptool.project.catalog import load_catalog
    from dptool.project.dbt import DbtProject
    from dptool.project.lock import project_lock

    project = DbtProject(project_dir, profiles_dir, dbt_target)
    client = _require(configured_llm(llm, project_dir, ollama_host, llm_timeout), "link")
    click.get_current_context().with_resource(project_lock(project_dir, "dptool link", click.echo))
    catalog = load_catalog(project.load_manifest(), str(project.manifest_path))
    click.echo(f"[link] {client.name} at {client.host}")
    client.ensure_model()
    target = Path(out) if out else None
    report = run_link(project, catalog, client, load_prompt("link"), rule_ids=list(rule_ids) or None, domain=domain,
                      out=target, echo=click.echo)
    folder = (target or project.project_dir / "target" / "dptool_link").resolve()
    click.echo("")
    click.echo(markdown(report).rstrip("\n"))
    click.echo("")
    click.echo(f"{client.name} requests: " + _usage_line(client, ("link",)))
    click.echo(f"suggestions for review (nothing was applied): {folder}")


@click.command("judge-agreement")
@llm_options
@click.argument("sample", type=click.Path(exists=True))
@click.option("--project-dir", default=".", show_default=True, type=click.Path(file_okay=False),
              help="A dbt project: its dbt_project.yml may name the model; replies are cached in its target/.")
@click.option("--out", default=None, type=click.Path(dir_okay=False),
              help="Write the result as JSON here (per dimension, and every task's verdict).")
def judge_agreement_command(llm, ollama_host, llm_timeout, sample, project_dir, out):
    """Per-dimension precision and recall of the LLM judge against people's labels (DI-Bench Appendix E.3).

    SAMPLE is JSONL (or a folder holding sample.jsonl): per line a task, the context the judge sees and
    the team's pass/fail label (1/0) for each of the eight dimensions.
    """
    from dptool.generate.judge import PROMPT_VERSIONS, agreement, agreement_markdown, judge, load_sample
    from dptool.llm.client import LLM, load_prompt, resolve_spec

    if out:
        check_file(out)  # before any request
    items = load_sample(sample)
    spec, _ = resolve_spec(llm, project_dir)
    spec = _require(spec, "judge-agreement")
    is_project = (Path(project_dir) / "dbt_project.yml").is_file()
    client = configured_llm(spec, project_dir, ollama_host, llm_timeout) if is_project else \
        LLM.from_spec(spec, host=ollama_host, timeout=llm_timeout, options=LLM_OPTIONS)
    prompt = load_prompt("judge", PROMPT_VERSIONS["judge"])
    client.ensure_model()
    verdicts = []
    with progressbar(items, label="  judging", file=sys.stderr) as bar:
        for item in bar:
            verdicts.append(judge(client, prompt, item["task"], item["context"]))
    result = agreement(items, verdicts)
    result.update({"model": client.name, "prompt": prompt.label, "sample": str(sample)})
    click.echo(agreement_markdown(result, client.name, prompt.label, Path(sample).name).rstrip("\n"))
    click.echo(f"{client.name} requests: " + _usage_line(client, ("judge",)))
    if out:
        write_file(out, json.dumps(result, indent=2, ensure_ascii=False, sort_keys=True) + "\n")
        click.echo(f"wrote {out}")
