"""Options shared by several commands, as decorators (one definition, one help text)."""

from __future__ import annotations

import functools
import math
import textwrap

import click

MAX_LLM_TIMEOUT = 86_400.0  # a day for one model reply: anything longer is no limit


def first_sentence(text: str) -> str:
    """The first sentence of a help text, whole (click cuts a command's summary mid-phrase to fit a line)."""
    paragraph = " ".join(text.strip().split("\n\n", 1)[0].split())
    end = paragraph.find(". ")
    return paragraph if end < 0 else paragraph[:end + 1]


class CommandGroup(click.Group):
    """A group whose command list gives each command's first sentence whole, wrapped at spaces only."""

    def format_commands(self, ctx, formatter):
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.short_help or first_sentence(command.help or "")))
        if rows:  # click's own list breaks words at hyphens ("base-|sql"): wrapped here at spaces only
            with formatter.section("Commands"):
                first = max(len(name) for name, _ in rows) + 2
                width = max(formatter.width - formatter.current_indent - first, 30)
                for name, text in rows:
                    lines = textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False) or [""]
                    formatter.write(f"{'':>{formatter.current_indent}}{name:<{first}}{lines[0]}\n")
                    for line in lines[1:]:
                        formatter.write(f"{'':>{formatter.current_indent + first}}{line}\n")


class Finite(click.FloatRange):
    """A number within [min, max] and finite: click's FloatRange lets `nan` through (no comparison with it is true),
    and a limit of `inf` or 1e10 is no limit (or overflows a timer)."""

    name = "finite float range"

    def _describe_range(self) -> str:
        # click prints `x<=None` for a range with no bounds: say nothing rather than that
        return "" if self.min is None and self.max is None else super()._describe_range()

    def get_metavar(self, param, ctx=None) -> str:
        return "NUMBER"

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def project_options(f):
    """--project-dir, --profiles-dir and --dbt-target, as dbt names them."""

    @click.option("--project-dir", default=".", show_default=True, type=click.Path(file_okay=False),
                  help="The dbt project (the folder holding dbt_project.yml).")
    @click.option("--profiles-dir", default=None, type=click.Path(file_okay=False),
                  help="Where profiles.yml is. Default: $DBT_PROFILES_DIR, the project, then ~/.dbt.")
    @click.option("--dbt-target", default=None, help="The profile target to use (dbt's --target).")
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)

    return wrapper


def seed_option(f):
    return click.option("--seed", default=42, show_default=True, type=int,
                        help="Seed of every random choice; the same seed gives the same output.")(f)


def _names(_ctx, _param, values) -> tuple[str, ...]:
    """A repeatable option's values, each of which may itself be a comma-separated list."""
    return tuple(dict.fromkeys(v.strip() for value in values for v in value.split(",") if v.strip()))


def selection_options(f):
    """--tasks, --type, --domain, --tier, --metric, --rule, --sample and --seed: which tasks of the bundle
    (dptool.evaluate.select).

    The command receives them as one `selection` argument (a Selection)."""
    from dptool.evaluate.select import TIERS

    @click.option("--tasks", "task_ids", default=None, metavar="ID,…|@FILE",
                  help="Only these task ids (comma-separated), or those listed in FILE (one per line).")
    @click.option("--type", "types", multiple=True, callback=_names, metavar="TYPE",
                  help="Only tasks of this analysis type (e.g. ranking); repeat it or separate by commas.")
    @click.option("--domain", "domains", multiple=True, callback=_names, metavar="DOMAIN",
                  help="Only tasks of this domain; repeat it or separate by commas.")
    @click.option("--tier", "tiers", multiple=True, callback=_names, metavar="TIER",
                  help=f"Only tasks of this tier ({', '.join(TIERS)}); repeat it or separate by commas.")
    @click.option("--metric", "metrics", multiple=True, callback=_names, metavar="METRIC",
                  help="Only tasks asking for this metric (its id, as the dbt project names it); repeat it or "
                       "separate by commas.")
    @click.option("--rule", "rules", multiple=True, callback=_names, metavar="RULE",
                  help="Only tasks this rule governs (its id, the name of its document in kb/<domain>/rules/; a "
                       "counterfactual's withdrawn rule too); repeat it or separate by commas.")
    @click.option("--sample", default=None, type=click.IntRange(1), metavar="N",
                  help="N of the tasks selected, stratified by domain and analysis type (the same N and seed give "
                       "the same tasks).")
    @click.option("--seed", "sample_seed", default=42, show_default=True, type=int, help="Seed of --sample.")
    @functools.wraps(f)
    def wrapper(*args, task_ids, types, domains, tiers, metrics, rules, sample, sample_seed, **kwargs):
        from dptool.evaluate.select import Selection, read_ids

        selection = Selection(read_ids(task_ids) if task_ids else (), types, domains, tiers, sample, sample_seed,
                              metrics, rules)
        return f(*args, selection=selection, **kwargs)

    return wrapper
