"""Processes a test starts as a user's terminal starts them."""

from __future__ import annotations

import signal


def as_from_a_terminal() -> None:
    """In a child before its exec: the keyboard's signals as a shell gives a foreground job. A suite started in the
    background of a script inherits SIGINT and SIGQUIT ignored, and Python then raises no KeyboardInterrupt."""
    for number in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)
