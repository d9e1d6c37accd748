"""`--help` is whole: every option says what it is, no bound reads `None`, no summary is cut, and the top-level help
lists the commands in the order of the workflow."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from dptool.cli.main import WORKFLOW, main


def _commands(group: click.Group, path: tuple[str, ...] = ()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))


COMMANDS = sorted(_commands(main), key=lambda pair: pair[0])


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_option_is_described(path, command):
    bare = [p.opts[0] for p in command.params
            if isinstance(p, click.Option) and not p.hidden and not (p.help or "").strip()]
    assert bare == [], f"dptool {' '.join(path)}: options without a help text"


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_no_help_shows_none_or_a_cut_summary(path, command):
    out = CliRunner().invoke(main, [*path, "--help"], terminal_width=80).output
    body = out.split("\n", 1)[1]  # the usage line ends in click's own "[ARGS]..."
    assert "None" not in out, out
    assert not [line for line in body.splitlines() if line.rstrip().endswith("...")], out


def test_the_top_level_help_lists_the_commands_in_workflow_order():
    out = CliRunner().invoke(main, ["--help"], terminal_width=80).output
    listed = [line.split()[0] for line in out.split("Commands:", 1)[1].splitlines()
              if line.startswith("  ") and not line.startswith("   ")]
    assert listed == [name for name in WORKFLOW if name in listed]
    assert set(listed) == set(main.list_commands(click.Context(main)))
    assert "The workflow, in order:" in out
    # a summary wraps at spaces only: a hyphenated word (base-sql) stays whole
    assert "base-sql" in out and "base-\n" not in out
