"""The `dptool` group: its error handler, its own commands (generate, init, rule, demo-data, graph, ablate) and the
command groups of the other areas, registered at the end."""

from __future__ import annotations

import os
import shutil
import sys
from collections import Counter
from pathlib import Path

import click

from dptool import __version__
from dptool.cli.compare import compare_command
from dptool.cli.dp import dp as dp_command
from dptool.cli.evaluate import answer_command, eval_command, score_command
from dptool.cli.interrupt import exit_interrupted, redeliver_lost_interrupts
from dptool.cli.llm import configured_llm, echo_llm_summary, judge_agreement_command, link_command, llm_options
from dptool.cli.options import CommandGroup, Finite, project_options, seed_option
from dptool.cli.serve import COMMANDS as SERVE_COMMANDS
from dptool.errors import DptoolError
from dptool.outdir import BUNDLE, check_file, check_update, remove_unpublished, write_file

# the commands in the order a user runs them; a command not named here follows, by name
WORKFLOW = ("init", "generate", "serve", "eval", "answer", "inspect-import", "score", "compare", "graph", "rule",
            "link", "judge-agreement", "ablate", "dp", "demo-data")


class Group(CommandGroup):
    """Turns every DptoolError into one line on stderr and exit code 1, never a traceback; a usage error (a bad
    option value, of a command or of `dptool` itself) is one line too, with click's exit code 2. Lists its commands
    in the order of the workflow."""

    def list_commands(self, ctx):
        names = super().list_commands(ctx)
        return sorted(names, key=lambda n: (WORKFLOW.index(n) if n in WORKFLOW else len(WORKFLOW), n))

    def make_context(self, info_name, args, parent=None, **extra):
        try:  # dptool's own options are parsed here, before invoke
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            _usage_error(exc)

    def invoke(self, ctx: click.Context):
        redeliver_lost_interrupts()
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:  # a bad option or argument of a command: one line too, click's exit code
            _usage_error(exc)
        except DptoolError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            exit_interrupted()  # the run has undone what it wrote
        finally:  # what it could not undo: a Ctrl-C between a staging folder's making and its owner's clean-up
            remove_unpublished()


def _usage_error(exc: click.UsageError):
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):  # `dptool` or a group alone: its help, as click shows it
        exc.show()
        sys.exit(exc.exit_code)
    where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
    click.echo(f"error: {exc.format_message()}{where}", err=True)
    sys.exit(exc.exit_code)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dptool")
def main():
    """Benchmarks for data agents from your dbt project's own metrics and business rules.

    Gold answers are computed by dbt: every task is a dbt model whose compiled SQL is its provenance.

    \b
    The workflow, in order:
      dptool init          set up the dbt project (once)
      dbt build            build the project
      dptool generate      write the benchmark bundle
      dptool serve | eval  run an agent (or bring answers.jsonl)
      dptool score         score a run; dptool compare ranks several
    """


@main.command()
@project_options
@seed_option
@click.option("--out", default="bundle", show_default=True, type=click.Path(file_okay=False),
              help="Folder of the benchmark bundle: new, empty, or a bundle dptool wrote (any other folder is "
                   "refused before any work); replaced only once the new one is complete.")
@click.option("--target", "target_tasks", default=60, show_default=True, type=click.IntRange(1),
              help="What the sampler aims at, not an exact count: the candidates its skeletons should yield, "
                   "shared equally by the domains; --min-per-type then adds more, and validation drops some.")
@click.option("--min-per-type", default=10, show_default=True, type=click.IntRange(0),
              help="Raise every analysis type to this many tasks per domain from unused skeletons.")
@click.option("--refresh", default=None, type=click.Path(file_okay=False, exists=True),
              help="An earlier bundle: regenerate it as it was made (target, seed, minimum per type, rules dir, LLM "
                   "and dbt target, as its bundle.json records them, unless given here) and write what changed "
                   "(refresh.md, refresh.json).")
@click.option("--quiet", is_flag=True, help="No progress output; only the summary.")
@click.option("--rules-dir", default=None, type=click.Path(file_okay=False),
              help="A folder of rule documents as markdown (<rule id>.md), for rule macros without a description.")
@llm_options
@click.pass_context
def generate(ctx, project_dir, profiles_dir, dbt_target, seed, out, target_tasks, min_per_type, refresh, quiet,
             rules_dir, llm, ollama_host, llm_timeout):
    """Generate a benchmark bundle from the dbt project's target/manifest.json.

    Run `dbt build` first: dptool reads the built tables to pick slices, compiles one gold model per
    candidate with dbt, runs its SQL on the target, writes the gold models kept under models/dptool_gold/
    (disabled unless the dbt var dptool_gold is true: `dbt build --selector dptool_gold --vars '{dptool_gold: true}'`
    builds and tests them), and writes OUT/ (tasks.jsonl, kb/,
    warehouse.duckdb, graph.json, card.md).
    """
    from dptool.generate.pipeline import generate as run

    if refresh and ctx.get_parameter_source("out") is click.core.ParameterSource.DEFAULT:
        out = refresh  # refresh in place, unless told where
    echo = (lambda _: None) if quiet else click.echo
    if refresh:
        # made again as the old bundle was made, but for what the command line says
        given = {name: value for name, value in (("target", target_tasks), ("min_per_type", min_per_type),
                                                 ("seed", seed), ("rules_dir", rules_dir), ("llm", llm),
                                                 ("dbt_target", dbt_target))}
        kept = reused_settings(refresh, given, lambda name: ctx.get_parameter_source(
            {"target": "target_tasks"}.get(name, name)) is click.core.ParameterSource.COMMANDLINE)
        target_tasks, min_per_type, seed, rules_dir, llm, dbt_target = (
            kept[k] for k in ("target", "min_per_type", "seed", "rules_dir", "llm", "dbt_target"))
        echo(f"[refresh] as {refresh} was made: " + ", ".join(
            f"{k.replace('_', ' ')} {kept[k]}" for k in ("target", "min_per_type", "seed", "rules_dir", "llm",
                                                        "dbt_target") if kept[k] is not None)
             + " (options on the command line win)")
    client = configured_llm(llm, project_dir, ollama_host, llm_timeout)
    if client is None and not quiet:  # said with the run's first line: a run refused before any work says only why
        said, rest = [], echo

        def echo(text: str) -> None:
            if not said:
                said.append(True)
                click.echo("[llm] none configured: template phrasing and stage-1 checks (deterministic)")
            rest(text)
    from dptool.generate.pipeline import NoTask

    try:
        result = run(project_dir, out, seed=seed, target_tasks=target_tasks, min_per_type=min_per_type,
                     profiles_dir=profiles_dir, dbt_target=dbt_target, refresh=refresh, echo=echo,
                     progress=not quiet, rules_dir=rules_dir, llm=client)
    except NoTask as exc:  # the causes, --quiet or not; then the error line (exit 1)
        click.echo("")
        for line in exc.warnings:
            click.echo(line)
        raise
    by_type = Counter(t["analysis_type"] for t in result.tasks)
    by_tier = Counter(t["tier"] for t in result.tasks)
    click.echo("")
    click.echo(f"{len(result.tasks)} validated tasks in {result.bundle}")
    for name, n in sorted(by_type.items()):
        click.echo(f"  {name:<20} {n:>4}")
    click.echo("  " + ", ".join(f"{tier}: {n}" for tier, n in sorted(by_tier.items())))
    click.echo(f"dropped by dbt or as unscorable: {len(result.dropped)}; "
               f"rejected by validation: {sum(result.rejected.values())}")
    click.echo("stage seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in result.timings.items()))
    for line in result.warnings:  # a metric or rule none of whose candidates ran: its SQL is likely at fault
        click.echo(line)
    if client is not None:
        echo_llm_summary(client, result.review)
    if refresh:
        click.echo(f"what changed since {refresh}: {result.bundle / 'refresh.md'}")
    # the var enables the gold models, whose pages need their compiled SQL; --threads 1: see dptool.project.dbt
    click.echo(f"provenance: cd {Path(project_dir).resolve()} && dbt docs generate --vars '{{dptool_gold: true}}' "
               "--threads 1 && dbt docs serve")


def reused_settings(bundle: str, given: dict, on_command_line) -> dict:
    """The settings a refresh of `bundle` runs with: each as bundle.json recorded it, unless `on_command_line(name)`
    (then as `given`). A bundle without bundle.json (older) gives what was given."""
    from dptool.bundle import read_record

    record = (read_record(bundle) or {}).get("made_with") or {}
    kept = {name: value if on_command_line(name) or name not in record else record[name]
            for name, value in given.items()}
    if "llm" in record and not on_command_line("llm") and record["llm"] is None:
        kept["llm"] = "none"  # made without a model: one configured since ($DPTOOL_LLM) is used only when asked
    return kept


@main.command()
@click.option("--project-dir", default=".", show_default=True, type=click.Path(file_okay=False),
              help="The dbt project (the folder holding dbt_project.yml).")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
def init(project_dir, dry_run):
    """Set up a dbt project for dptool: install the dptool dbt package, scaffold commented examples.

    Adds the dbt package shipped with this dptool to packages.yml (a `local:` package, its path relative to
    the project), a selector `dptool_gold` to selectors.yml, what dptool writes by default (bundles, which hold
    a copy of the data, answers, scores, runs, generated models) to the .gitignore of the git root, and new
    files with commented examples of every declaration. The gold models `dptool generate` writes are disabled
    unless the dbt var dptool_gold is true: no dbt command of yours builds them, whatever it selects. Never
    rewrites a file of yours: what it cannot add, it says in a note (a generate_schema_name of yours). Running
    it again changes nothing.
    """
    from dptool.project.scaffold import init as run

    if not dry_run:
        _lock(project_dir, "dptool init")
    root, conf, changes = run(project_dir, dry_run=dry_run)
    click.echo(f"dptool init in {root} (dbt project {conf['name']!r})")
    for change in changes:
        click.echo(change.line(dry_run))
    if dry_run:
        for change in changes:
            if change.action in ("append", "update") or (change.action == "create" and (change.path in (
                    "packages.yml", "dependencies.yml", "selectors.yml") or change.path.endswith(".gitignore"))):
                click.echo(f"\n--- {change.path} ({'lines added' if change.action == 'append' else 'new text'})")
                click.echo(change.text.rstrip("\n"))
        click.echo("\ndry run: nothing was written")
        return
    if all(c.action in ("ok", "skip", "note") for c in changes):
        click.echo("already set up: nothing changed")
    click.echo("next:")
    click.echo("  dbt deps")
    click.echo("  dbt build")
    click.echo("  dptool generate")
    click.echo("  dbt build --selector dptool_gold --vars '{dptool_gold: true}' --threads 1    # the gold models "
               "and their rule tests, when you want them")


@main.group(cls=CommandGroup)
def rule():
    """Business rules: scaffold a new one."""


@rule.command("new")
@click.argument("rule_id")
@click.option("--metric", "metrics", required=True, multiple=True,
              help="The id of a metric the rule modifies; repeat it for a rule of several metrics.")
@click.option("--type", "rule_type", default="definitional", show_default=True,
              type=click.Choice(["definitional", "exclusionary", "temporal", "conditional", "privacy", "override"]),
              help="The rule type (DI-Bench's six).")
@click.option("--title", default=None, help="The rule's title. Default: from its id.")
@click.option("--rules-dir", default=None, type=click.Path(file_okay=False),
              help="Write the rule document as <id>.md in this folder instead of a docs block.")
@click.option("--project-dir", default=".", show_default=True, type=click.Path(file_okay=False),
              help="The dbt project (the folder holding dbt_project.yml).")
@click.option("--dry-run", is_flag=True, help="Say what would be written; write nothing.")
def rule_new(rule_id, metrics, rule_type, title, rules_dir, project_dir, dry_run):
    """Scaffold rule RULE_ID of one or more metrics: its macro, its properties and its rule document.

    Each --metric is checked against the project's last target/manifest.json: a semantic-layer metric that
    dptool declares under another id (a model has its name) is named by that id.
    """
    from dptool.project.scaffold import apply, plan_rule, resolve_metrics

    if not dry_run:
        _lock(project_dir, "dptool rule new")
    root, _ = plan_rule(project_dir, rule_id, list(metrics), rule_type, title, rules_dir)  # checks what it can alone
    ids, notes = resolve_metrics(root, list(metrics))
    root, changes = plan_rule(project_dir, rule_id, ids, rule_type, title, rules_dir)
    if not dry_run:
        apply(root, changes)
    for change in changes:
        click.echo(change.line(dry_run, max(len(c.path) for c in changes)))
    for note in notes:
        click.echo(f"  {note}")
    if not dry_run:
        click.echo("next: make the macro change q, write the document, then `dbt build` and `dptool generate`")
        click.echo("  (its knowledge tasks ask for the numbers, dates and **bold** terms of the document's `## Rule` "
                   "section and for the date on its `Effective date` line; a TODO left there gives none)")


@main.command("demo-data")
@seed_option
@click.option("--domain", type=click.Choice(["ecommerce", "banking"]), default="ecommerce", show_default=True,
              help="ecommerce: Olist-shaped orders; banking: Berka-shaped (PKDD'99 Czech financial) accounts.")
@click.option("--scale", default=1.0, show_default=True, type=Finite(0.001, 1000),
              help="1.0 is about 10,000 orders (ecommerce) or 360 accounts and 90,000 transactions (banking).")
@click.option("--from", "from_dir", default=None, type=click.Path(file_okay=False),
              help="banking: convert Berka's real files in this folder (.asc, csv or parquet) instead of generating.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Folder for the CSV files (dbt seeds). Default: seeds/<domain>.")
@click.pass_context
def demo_data(ctx, seed, domain, scale, from_dir, out):
    """Write the Olist- or Berka-shaped demo data (deterministic for a seed and scale) as CSV seeds.

    A CSV there is replaced only if dptool wrote it and it is unchanged since (see README, --out).
    """
    from dptool.demo import banking, ecommerce
    from dptool.outdir import check_files, install_files, staging_folder

    out = Path(out or f"seeds/{domain}")
    files = [f"{n}.csv" for n in (banking.SEEDS.values() if domain == "banking" else ecommerce.TABLES)]
    check_files(out, files)  # before any work
    final, out = out, staging_folder(Path(os.path.abspath(out)))  # each CSV written here, then renamed into place
    try:
        counts, names = _demo_data(ctx, seed, domain, scale, from_dir, out)
        install_files(final, {f"{names[t]}.csv": out / f"{names[t]}.csv" for t in counts})
    finally:
        shutil.rmtree(out, ignore_errors=True)
    for table, n in counts.items():
        click.echo(f"{n:>9,} rows  {final / (names[table] + '.csv')}")


def _demo_data(ctx, seed, domain, scale, from_dir, out: Path) -> tuple[dict[str, int], dict[str, str]]:
    if from_dir is not None:
        if domain != "banking":
            raise DptoolError("--from converts the real Berka files: use it with --domain banking")
        given = [f"--{p}" for p in ("scale", "seed")
                 if ctx.get_parameter_source(p) is not click.core.ParameterSource.DEFAULT]
        if given:
            raise DptoolError(f"{' and '.join(given)} only apply to generated data, not to --from")
        from dptool.demo.banking import SEEDS, convert

        counts = convert(from_dir, out)
        names = {t: SEEDS[t] for t in counts}
    elif domain == "banking":
        from dptool.demo.banking import SEEDS, write_csvs

        counts = write_csvs(out, scale=scale, seed=seed)
        names = {t: SEEDS[t] for t in counts}
    else:
        from dptool.demo.ecommerce import write_csvs

        counts = write_csvs(out, scale=scale, seed=seed)
        names = {t: t for t in counts}
    return counts, names


@main.command()
@project_options
@click.option("--format", "fmt", type=click.Choice(["json", "svg", "html"]), default="json", show_default=True,
              help="json: nodes, edges and counts; svg or html: a picture with node types coloured.")
@click.option("--out", default=None, type=click.Path(dir_okay=False),
              help="Where to write it. Default: graph.<format>.")
def graph(project_dir, profiles_dir, dbt_target, fmt, out):
    """Write the artifact linkage graph of the project: JSON, or a picture (SVG, HTML)."""
    from dptool.generate.graph import build_graph, graph_stats, graph_to_json
    from dptool.generate.graph_draw import draw_html, draw_svg
    from dptool.project.catalog import load_catalog
    from dptool.project.dbt import DbtProject

    out = check_file(out or f"graph.{fmt}")  # before any work: never a file of the user's (dbt_project.yml)
    project = DbtProject(project_dir, profiles_dir, dbt_target)
    catalog = load_catalog(project.load_manifest(), str(project.manifest_path))
    g = build_graph(catalog)
    title = f"Artifact linkage graph of {catalog.project}"
    text = {"json": graph_to_json, "svg": lambda g: draw_svg(g, title), "html": lambda g: draw_html(g, title)}[fmt](g)
    write_file(out, text)
    stats = graph_stats(g)
    click.echo(f"{stats['nodes']} nodes, {stats['edges']} edges -> {out}")


@main.group(cls=CommandGroup)
def ablate():
    """Ablations of the generator (DI-Bench §5, Appendix C)."""


@ablate.command("pairing")
@project_options
@seed_option
@click.option("--limit", default=None, type=click.IntRange(1),
              help="Only N rule tasks, spread evenly over the bundle.")
@click.argument("bundle", type=click.Path(file_okay=False, exists=True))
def ablate_pairing(project_dir, profiles_dir, dbt_target, seed, limit, bundle):
    """Re-pair every rule task's metric with the graph's rule, the most similar rule by text and a random
    rule; re-execute with dbt (compiled, run on the target, nothing built); put the share of pairings that change
    the answer into BUNDLE/card.md."""
    from dptool.generate.ablate import markdown, run_pairing, update_bundle
    from dptool.generate.refresh import read_tasks
    from dptool.project.catalog import load_catalog
    from dptool.project.dbt import DbtProject

    check_update(bundle, BUNDLE, ["card.md", "ablation.json"])  # before any work
    _lock(project_dir, "dptool ablate pairing")
    project = DbtProject(project_dir, profiles_dir, dbt_target)
    catalog = load_catalog(project.load_manifest(), str(project.manifest_path))
    result = run_pairing(project, catalog, read_tasks(bundle), seed, limit, echo=click.echo, progress=True)
    update_bundle(Path(bundle), result)
    click.echo(markdown(result))


def _lock(project_dir, command: str) -> None:
    """Hold the project's lock until the command ends (dptool.project.lock): one run at a time writes a project."""
    from dptool.project.lock import project_lock

    click.get_current_context().with_resource(project_lock(project_dir, command, click.echo))


# Commands of other areas register here, one line each (their modules import nothing from this one).
COMMANDS: list[click.Command] = [score_command, answer_command, eval_command, dp_command, link_command,
                                 judge_agreement_command, compare_command, *SERVE_COMMANDS]
for command in COMMANDS:
    main.add_command(command)
