"""Options shared by several commands, as decorators (one definition, one help text)."""

from __future__ import annotations

import functools

import click


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
