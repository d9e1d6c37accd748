"""`dbt docs serve` that a Ctrl-C ends quietly: `python -m dptool.project.docs_serve [dbt docs serve's options]`
(`make docs`).

A Ctrl-C reaches every process of the terminal's foreground group: under make, make too, which then reports
"make: *** [...] Interrupt" and exits 130 whatever the server does. So this process takes the terminal's
foreground for a group of its own (as a shell's job control does), runs the server in another group, and on a
Ctrl-C stops the server, says so in one line and exits 0; the terminal goes back to the group that had it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

STOPPED = "docs server stopped"


def dbt() -> str:
    """The dbt beside this Python (the venv's), else the one on PATH."""
    here = Path(sys.executable).parent / "dbt"
    return str(here) if here.exists() else shutil.which("dbt") or "dbt"


@contextlib.contextmanager
def foreground() -> Iterator[None]:
    """This process leads a group of its own that holds the terminal's foreground (no terminal: nothing to do);
    the group that held it gets it back."""
    try:
        tty = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        yield
        return
    before = os.tcgetpgrp(tty)
    # a group out of the foreground that sets the foreground would be stopped by SIGTTOU
    ttou = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        os.setpgid(0, 0)
        os.tcsetpgrp(tty, os.getpgrp())
        yield
    finally:
        with contextlib.suppress(OSError):
            os.tcsetpgrp(tty, before)
        signal.signal(signal.SIGTTOU, ttou)
        os.close(tty)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    with foreground():
        server = subprocess.Popen([dbt(), "docs", "serve", *args], process_group=0)  # no Ctrl-C of its own
        try:
            return server.wait()
        except KeyboardInterrupt:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            print(f"\n{STOPPED}", flush=True)
            return 0


if __name__ == "__main__":
    sys.exit(main())
