"""A Ctrl-C on `make docs` stops dbt's docs server and ends make quietly: `make docs-serve` (the serving half of
`make docs`) on a minimal dbt project, run on a pseudo-terminal as a user's shell runs it, and ^C typed into it."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import shutil
import socket
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from dptool.project.docs_serve import STOPPED
from tests.terminal import as_from_a_terminal

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serves(port: int) -> bool:
    with contextlib.suppress(OSError), urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html",
                                                               timeout=2) as reply:
        return reply.status == 200 and bool(reply.read())  # read whole: no reset for the server to report
    return False


def read(fd: int, until, timeout: float) -> bytes:
    """What the terminal shows until `until()` holds or the other side closes it."""
    out, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline and not until():
        if select.select([fd], [], [], 0.2)[0]:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: every process of the terminal is gone
                break
            if not chunk:
                break
            out += chunk
    return out


def exited(pid: int, timeout: float) -> int:
    """The wait status of a child that ends within `timeout` seconds; the test fails if it does not."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.2)
    pytest.fail(f"make docs-serve still runs {timeout:.0f} s after the Ctrl-C")


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_a_ctrl_c_on_make_docs_stops_the_server_and_make_ends_quietly(tmp_path):
    project = tmp_path / "project"
    (project / "target").mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: serve_check\nversion: '1.0'\nconfig-version: 2\n"
                                             "profile: serve_check\n", encoding="utf-8")
    (project / "profiles.yml").write_text("serve_check:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
                                          f"      path: {tmp_path / 'x.duckdb'}\n", encoding="utf-8")
    port, venv = free_port(), Path(sys.executable).parent.parent
    # this venv's tools, and not a reinstall of it (-o: its install stamp counts as up to date)
    command = ["make", "-C", str(REPO), "-o", f"{venv}/.installed", "docs-serve", f"VENV={venv}",
               f"DOCS_PROJECT={project}", f"DOCS_PORT={port}", "DOCS_SERVE_FLAGS=--no-browser"]
    pid, terminal = pty.fork()
    if pid == 0:  # the child: a session of its own on the pseudo-terminal, as a shell's job
        try:
            # as a user's shell starts it: not as the sub-make of a `make test`
            env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
            as_from_a_terminal()
            os.execvpe(command[0], command, env)
        finally:
            os._exit(127)
    try:
        shown = read(terminal, lambda: serves(port), timeout=120)
        assert serves(port), shown.decode(errors="replace")
        os.write(terminal, b"\x03")  # Ctrl-C, typed: the terminal signals its foreground group
        shown += read(terminal, lambda: False, timeout=60)
        status = exited(pid, timeout=30)  # a server the Ctrl-C left running fails the test, not hangs it
    finally:
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(terminal)
    text = shown.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert STOPPED in text and "^C" in text  # the terminal echoes the key; then the one line
    noise = ("make: ***", "make[", "Error", "Interrupt", "Traceback", "KeyboardInterrupt")
    assert not [word for word in noise if word in text], text
    assert not serves(port)  # the server is gone, not left behind
