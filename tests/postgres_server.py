"""A throw-away PostgreSQL server on loopback, for the tests that run dbt on PostgreSQL (stdlib only).

CI (.ci/run) starts one before the test run and exports where it is:

    eval "$(python3 tests/postgres_server.py start /tmp/dptool-pg)"   # DPTOOL_PG_HOST, _PORT, _USER, _DATABASE
    python3 tests/postgres_server.py stop /tmp/dptool-pg

Without those variables the test fixture starts its own server with the same code, and the tests skip when
none can be started (no PostgreSQL binaries, no user to run them as) unless DPTOOL_REQUIRE_POSTGRES=1,
under which they fail instead. The server is Debian's `postgresql` package's binaries run by an unprivileged
user (PostgreSQL refuses root), listening on 127.0.0.1 only, with trust authentication and fsync off.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

USER = "dptool"  # the database superuser initdb creates
DATABASE = "dptool"


class Unavailable(Exception):
    """No PostgreSQL server can be started on this machine."""


def binaries() -> Path:
    """The folder of initdb and pg_ctl: PATH first, then Debian's /usr/lib/postgresql/<version>/bin."""
    found = shutil.which("initdb") or shutil.which("pg_ctl")
    if found:
        return Path(os.path.realpath(found)).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                      key=lambda p: [int(x) for x in Path(p).parent.parent.name.split(".") if x.isdigit()])
    if not versions:
        raise Unavailable("no PostgreSQL binaries (initdb); install Debian's package: apt-get install postgresql")
    return Path(versions[-1]).parent


def _runner() -> list[str]:
    """How to run the server's binaries: as ourselves, or, as root, as the `postgres` (or `nobody`) user."""
    if os.geteuid() != 0:
        return []
    runuser = shutil.which("runuser")
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        if runuser:
            return [runuser, "-u", name, "--"]
    raise Unavailable("running as root and no `postgres` user with runuser to start PostgreSQL as")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(folder: str | Path) -> dict[str, str]:
    """Start a new server with its data in `folder` (created, emptied); return its connection settings."""
    folder = Path(folder).resolve()
    bin_dir = binaries()
    run_as = _runner()
    if folder.exists():
        stop(folder)
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    if run_as:  # the unprivileged user must own the folder
        user = run_as[2]
        entry = pwd.getpwnam(user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    data, port = folder / "data", _free_port()

    def run(*args: str, timeout: float = 120) -> None:
        proc = subprocess.run([*run_as, *args], capture_output=True, text=True, timeout=timeout, cwd=folder)
        if proc.returncode != 0:
            raise Unavailable(f"{Path(args[0]).name} failed: {(proc.stderr or proc.stdout).strip()[-500:]}")

    run(str(bin_dir / "initdb"), "-D", str(data), "-U", USER, "-A", "trust", "-E", "UTF8", "--no-sync",
        "--locale=C")
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c fsync=off -c synchronous_commit=off " \
              "-c full_page_writes=off -c max_connections=40"
    run(str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "server.log"), "-w",
        "-t", "60", "start")
    run(str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", USER, DATABASE)
    settings = {"DPTOOL_PG_HOST": "127.0.0.1", "DPTOOL_PG_PORT": str(port), "DPTOOL_PG_USER": USER,
                "DPTOOL_PG_PASSWORD": "", "DPTOOL_PG_DATABASE": DATABASE}
    (folder / "settings").write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
    return settings


def stop(folder: str | Path) -> None:
    """Stop the server whose data is in `folder`, if it runs."""
    data = Path(folder).resolve() / "data"
    if not (data / "postmaster.pid").exists():
        return
    subprocess.run([*_runner(), str(binaries() / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
                   capture_output=True, text=True, timeout=60)


def wait_ready(host: str, port: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=1):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] not in ("start", "stop"):
        print("usage: postgres_server.py start|stop FOLDER", file=sys.stderr)
        return 2
    if argv[1] == "stop":
        stop(argv[2])
        return 0
    try:
        settings = start(argv[2])
    except (Unavailable, subprocess.TimeoutExpired) as exc:
        print(f"postgres_server: {exc}", file=sys.stderr)
        return 1
    for key, value in settings.items():
        print(f"export {key}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
