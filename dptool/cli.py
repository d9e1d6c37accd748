"""The `dptool` command: one click group, shared option decorators, one error handler."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import click

from dptool import __version__
from dptool.errors import DptoolError
from dptool.options import project_options, seed_option


class Group(click.Group):
    """Turns every DptoolError into one line on stderr and exit code 1, never a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except DptoolError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            click.echo("error: interrupted; nothing was written to the output folder", err=True)
            sys.exit(130)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dptool")
def main():
    """Benchmarks for data agents from your dbt project's own metrics and business rules.

    Gold answers are computed by dbt: every task is a dbt model whose compiled SQL is its provenance.
    """


@main.command()
@project_options
@seed_option
@click.option("--out", default="bundle", show_default=True, type=click.Path(file_okay=False),
              help="Folder of the benchmark bundle; replaced only once the new one is complete.")
@click.option("--target", "target_tasks", default=60, show_default=True, type=click.IntRange(1),
              help="How many tasks to aim for before validation.")
@click.option("--quiet", is_flag=True, help="No progress output; only the summary.")
def generate(project_dir, profiles_dir, dbt_target, seed, out, target_tasks, quiet):
    """Generate a benchmark bundle from the dbt project's target/manifest.json.

    Run `dbt build` first: dptool reads the built tables to pick slices, writes one gold model per
    task under models/dptool_gold/, builds them with dbt, and writes OUT/ (tasks.jsonl, kb/,
    warehouse.duckdb, graph.json, card.md).
    """
    from dptool.pipeline import generate as run

    echo = (lambda _: None) if quiet else click.echo
    result = run(project_dir, out, seed=seed, target_tasks=target_tasks, profiles_dir=profiles_dir,
                 dbt_target=dbt_target, echo=echo, progress=not quiet)
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
    click.echo(f"provenance: cd {Path(project_dir).resolve()} && dbt docs generate && dbt docs serve")


@main.command("demo-data")
@seed_option
@click.option("--scale", default=1.0, show_default=True, type=click.FloatRange(min=0.001),
              help="1.0 is about 10,000 orders.")
@click.option("--out", default="seeds/ecommerce", show_default=True, type=click.Path(file_okay=False),
              help="Folder for the CSV files (dbt seeds).")
def demo_data(seed, scale, out):
    """Write the Olist-shaped demo data (deterministic for a seed and scale) as CSV seeds."""
    from dptool.demo.ecommerce import write_csvs

    counts = write_csvs(Path(out), scale=scale, seed=seed)
    for name, n in counts.items():
        click.echo(f"{n:>9,} rows  {Path(out) / (name + '.csv')}")


@main.command()
@project_options
@click.option("--out", default="graph.json", show_default=True, type=click.Path(dir_okay=False),
              help="Where to write the graph.")
def graph(project_dir, profiles_dir, dbt_target, out):
    """Write the artifact linkage graph of the project as JSON (nodes, edges, counts by type)."""
    from dptool.catalog import load_catalog
    from dptool.dbt import DbtProject
    from dptool.graph import build_graph, graph_stats, graph_to_json

    project = DbtProject(project_dir, profiles_dir, dbt_target)
    g = build_graph(load_catalog(project.load_manifest(), str(project.manifest_path)))
    Path(out).write_text(graph_to_json(g), encoding="utf-8")
    stats = graph_stats(g)
    click.echo(f"{stats['nodes']} nodes, {stats['edges']} edges -> {out}")


# Commands of other areas register here, one line each (their modules import nothing from this one).
COMMANDS: list[click.Command] = []
for command in COMMANDS:
    main.add_command(command)

if __name__ == "__main__":
    main()
