"""How the CLI ends on Ctrl-C: one line on stderr and exit code 130, whatever was running."""

from __future__ import annotations

import _thread
import signal
import sys
import threading
import time

import click


def redeliver_lost_interrupts() -> None:
    """Make a Ctrl-C that Python would drop reach the command: a KeyboardInterrupt raised in a finalizer (a
    generator or object the garbage collector closes while its clean-up waits on threads) is only printed as
    "Exception ignored", and the run would go on to the end; it is raised again in the main thread instead."""
    default = sys.unraisablehook
    if getattr(default, "redelivers", False):  # a nested group's invoke: installed already
        return

    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and callable(signal.getsignal(signal.SIGINT)):
            # from another thread, a moment later: raised from here, it would land in this hook and be dropped too
            threading.Thread(target=_interrupt_soon, daemon=True).start()
            return
        default(unraisable)

    hook.redelivers = True
    sys.unraisablehook = hook


def _interrupt_soon() -> None:
    time.sleep(0.01)
    _thread.interrupt_main()  # as if the signal came now


def exit_interrupted(message: str = "error: interrupted") -> None:
    """Print `message` and exit 130; a further Ctrl-C while the process ends is ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    click.echo(message, err=True)
    # CPython marks the process for death by SIGINT when a KeyboardInterrupt ends any *string* exec (dbt's dataclass
    # and mashumaro code generation run them while it parses) and, under `python -m`, kills itself with the signal
    # at exit (-2) whatever sys.exit said; the next string exec clears the mark (Python/pythonrun.c).
    exec("", {})  # noqa: S102
    sys.exit(130)
