"""`dptool compare`: a leaderboard of several runs on one bundle."""

from __future__ import annotations

import click

from dptool.cli.options import selection_options


@click.command("compare")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--bundle", default="bundle", show_default=True, type=click.Path(exists=True, file_okay=False),
              help="The bundle the runs were made on; a run made on another is refused.")
@click.option("--out", default="compare", show_default=True, type=click.Path(file_okay=False),
              help="Folder for compare.md, compare.html and compare.json.")
@selection_options
def compare_command(runs, bundle, out, selection):
    """Rank runs (run folders or answers files) of one bundle by accuracy, with 95 % intervals.

    Every run is scored as `dptool score` scores it: on the tasks selected (none selected: those its run.json says
    it ran; a task a run did not answer is wrong for it), a no-rule run against the rule-free answers; overall and
    by analysis type, tier, rule type, domain, metric and rule, with pass^k for runs of k > 1 attempts, each run's
    condition and completeness, why answers were wrong ("rules not applied", "withdrawn rule still applied",
    "truncated", …) and the tasks that flipped between neighbours of the ranking.
    """
    from dptool.evaluate.compare import COMPARE_FILES, compare, load_runs, markdown, write_compare
    from dptool.evaluate.score import load_tasks
    from dptool.outdir import check_files

    check_files(out, list(COMPARE_FILES))  # before any work: a file of the user's there is never overwritten
    tasks = load_tasks(bundle)
    if not selection.everything:
        click.echo(f"selection: {selection.describe()}: {len(selection.apply(tasks))} tasks")
    result = compare(load_runs(list(runs), bundle, tasks, selection), bundle, tasks)
    paths = write_compare(result, out)
    click.echo(markdown(result, full=False), nl=False)
    click.echo("wrote " + ", ".join(str(p) for p in paths))
