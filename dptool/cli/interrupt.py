"""How the CLI ends on Ctrl-C: one line on stderr and exit code 130, whatever was running."""

from __future__ import annotations

import signal
import sys

import click


def exit_interrupted(message: str = "error: interrupted") -> None:
    """Print `message` and exit 130; a further Ctrl-C while the process ends is ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    click.echo(message, err=True)
    # CPython marks the process for death by SIGINT when a KeyboardInterrupt ends any *string* exec (dbt's dataclass
    # and mashumaro code generation run them while it parses) and, under `python -m`, kills itself with the signal
    # at exit (-2) whatever sys.exit said; the next string exec clears the mark (Python/pythonrun.c).
    exec("", {})  # noqa: S102
    sys.exit(130)
