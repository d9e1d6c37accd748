"""The SQL sandbox of agents: one read-only query per call, with a size, time and memory limit (DESIGN §6).

Three walls. First, sqlglot (dptool.evaluate.sql_check): a statement runs only when it parses as exactly one
SELECT/WITH query that reads nothing but tables, CTEs and `range`/`generate_series`; everything else is refused with
a one-line error the agent sees, and so is a table name DuckDB would read as a file (`passwd.csv`,
`'x.json'`). Second, DuckDB itself: the file is opened read-only, with file and
network access, extension loading and configuration changes disabled, so a statement that slipped
past the parser still cannot write, read files or change settings. Third, a child process
(`dptool.evaluate.sql_worker`) per task: parsing and execution run there under the time limit (DuckDB's
interrupt first, then the process is killed), its address space is capped, and no session state
(`setseed()`, ...) carries from one task to the next. A query stopped at the memory or the time limit ends its
worker too: the memory it took is not all given back, and the next query runs on a fresh one.

A worker is ready before a query needs it: on Linux each is forked (milliseconds) from a fork server that has
imported DuckDB and sqlglot once (elsewhere it is a new process), and the next task's worker is started, and opens
the warehouse, while the current task runs.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from dptool.errors import DptoolError
from dptool.evaluate import limits

DEFAULT_TIMEOUT = 10.0
DEFAULT_MAX_ROWS = 100
DEFAULT_MEMORY_MB = 1024
THREADS = 2  # DuckDB threads per query: agents' queries are small, and every thread costs memory
MAX_SQL_CHARS = 50_000  # checked before parsing: sqlglot spends seconds on a text of megabytes
MAX_GRACE = 0.5  # seconds a query may take to obey DuckDB's interrupt before its process is killed
EXIT_STUCK = 3  # a worker's own exit code when a query ignored the interrupt and the parent was gone
START_TIMEOUT = 120.0  # seconds for a worker to import DuckDB and open the warehouse on a busy machine
MAX_CELL_CHARS = 200
MAX_OUTPUT_CHARS = 20_000
ONLY = "run_sql takes exactly one read-only SELECT or WITH query"


def too_long(sql: str) -> str | None:
    """The refusal of a SQL text over MAX_SQL_CHARS, or None."""
    if len(sql) > MAX_SQL_CHARS:
        return f"refused: the SQL is {len(sql):,} characters, at most {MAX_SQL_CHARS:,}; {ONLY} of a usual size"
    return None


@dataclass
class Result:
    columns: list[str]
    rows: list[tuple]
    truncated: bool


def stopped_message(timeout: float) -> str:
    return f"query stopped after {timeout:g} s (the time limit); make it cheaper: filter, aggregate or add LIMIT"


class Sandbox:
    """The warehouse of a bundle, opened read-only for an agent in a worker process.

    `run(sql)` gives what the agent sees. `new_session()` starts the next task on a fresh worker, so nothing
    one task did (a seed, a cached plan) is there for the next: the spare one, started with the current one.
    """

    def __init__(self, path: str | Path, *, timeout: float = DEFAULT_TIMEOUT, max_rows: int = DEFAULT_MAX_ROWS,
                 memory_mb: int = DEFAULT_MEMORY_MB, threads: int = THREADS, wait: bool = True):
        """`wait`: until the first worker has opened the warehouse (else it starts in the background, and a
        warehouse it cannot open is said at the first query)."""
        for name, value, bounds in (("timeout", timeout, limits.TIMEOUT), ("memory_mb", memory_mb, limits.MEMORY_MB),
                                    ("max_rows", max_rows, limits.MAX_ROWS)):
            problem = limits.out_of_range(f"the sandbox's {name}", value, bounds)
            if problem:
                raise DptoolError(problem)
        self.path = Path(path)
        self.timeout = timeout
        self.grace = min(MAX_GRACE, timeout / 4)
        self.max_rows = max_rows
        self.memory_mb = memory_mb
        self.threads = threads
        if not self.path.is_file():
            raise DptoolError(f"{self.path}: warehouse not found; expected a bundle written by `dptool generate`")
        if not _is_duckdb(self.path):  # said now, though the worker opens the file in the background
            raise DptoolError(f"{self.path}: not a DuckDB database; expected a bundle written by `dptool generate`")
        self._joined = FORKS and _FORK_SERVERS.join(self._command())  # left at close
        self._worker: _Worker | None = None
        self._spare: _Worker | None = None  # the next session's worker, started while this one's task runs
        self._used = False
        self._start()
        if wait:
            self.ready()  # a warehouse that cannot be opened is the user's error, said now

    def _command(self) -> list[str]:
        return [sys.executable, "-m", "dptool.evaluate.sql_worker", str(self.path),
                "--timeout", repr(self.timeout), "--grace", repr(self.grace), "--max-rows", str(self.max_rows),
                "--memory-mb", str(self.memory_mb), "--threads", str(self.threads)]

    def _new_worker(self) -> _Worker:
        if not FORKS:
            return _Worker(subprocess.Popen(self._command(), **_PIPES))
        return _Worker(_FORK_SERVERS.get(self._command()).fork())

    def _start(self) -> None:
        """Make the prepared spare the current worker (a new one if there is none), and prepare the next spare."""
        self._worker, self._spare = self._spare or self._new_worker(), None
        self._spare = self._new_worker()
        self._used = False

    def _stop(self) -> None:
        for worker in (self._worker, self._spare):
            if worker is not None:
                worker.kill()
        self._worker = self._spare = None

    def ready(self) -> None:
        """Wait until the worker has opened the warehouse (starting one if needed); DptoolError if it cannot."""
        if self._worker is None:
            self._start()
        problem = self._worker.wait_ready(START_TIMEOUT)
        if problem is not None:
            self._stop()
            raise DptoolError(f"{self.path}: cannot open ({problem})")

    def new_session(self) -> None:
        """Forget every query run so far: the next one runs on a fresh connection in a fresh process."""
        if self._used or self._worker is None:
            if self._worker is not None:
                self._worker.kill()
            self._start()  # the spare, warm since the last task began; the next one starts now

    def run(self, sql: str) -> str:
        """The tool output an agent sees: a text table, or one line starting with "error:".

        Raises only DptoolError, when no SQL worker can start at all (a broken installation).
        """
        if not isinstance(sql, str):
            return "error: run_sql needs a 'sql' string argument"
        refusal = too_long(sql)
        if refusal:
            return f"error: {refusal}"
        self.ready()
        self._used = True
        worker = self._worker
        reply = worker.ask({"sql": sql}, self.timeout + self.grace)
        if isinstance(reply, str):
            if worker.spent:  # stopped at the memory or time limit: what it took is not all given back
                worker.kill()
                self._start()
                self._used = True  # the same session goes on, on a fresh worker
            return reply
        # no answer in time: the query ignored the interrupt; or the worker died. Either way the next one is fresh
        code = worker.kill(wait=1.0 if reply is _GONE else 0.0)
        self._start()
        self._used = True
        if reply is _TIMED_OUT or code == EXIT_STUCK:
            return f"error: {stopped_message(self.timeout)}"
        return (f"error: the SQL engine died on this query (exit code {code}); nothing was changed; "
                f"make it cheaper or simpler")

    def schema(self) -> str:
        """The tables an agent may query, one line each: schema.table(column TYPE, ...)."""
        self.ready()
        reply = self._worker.ask({"schema": True}, START_TIMEOUT)
        if not isinstance(reply, str) or reply.startswith("error:"):
            raise DptoolError(f"{self.path}: cannot read the tables "
                              f"({reply if isinstance(reply, str) else 'the SQL worker stopped'})")
        return reply

    def close(self) -> None:
        self._stop()
        if self._joined:
            self._joined = False
            _FORK_SERVERS.leave(self._command())

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_TIMED_OUT, _GONE = object(), object()


class _Worker:
    """One `sql_worker` process: requests written to its stdin, replies read by a thread from its stdout."""

    def __init__(self, proc: subprocess.Popen | _Forked):
        self.proc = proc
        self.replies: queue.Queue[dict | None] = queue.Queue()
        self.spent = False  # the worker said its last query hit a limit: it exits, the next query needs a new one
        self.state: str | None = None  # None while starting, then "" (ready) or the reason it could not start
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        with self.proc.stdout:
            for line in self.proc.stdout:
                try:
                    self.replies.put(json.loads(line))
                except json.JSONDecodeError:
                    continue
        self.replies.put(None)  # end of output: the process is gone

    def wait_ready(self, timeout: float) -> str | None:
        """None once the worker has opened the warehouse, else why it could not."""
        if self.state is None:
            try:
                first = self.replies.get(timeout=timeout)
            except queue.Empty:
                first = {"error": f"the SQL worker did not start within {timeout:g} s"}
            if first is None:
                first = {"error": f"the SQL worker exited with code {self.proc.wait()}"}
            self.state = "" if first.get("ready") else first.get("error", "the SQL worker did not start")
        return self.state or None

    def ask(self, request: dict, timeout: float) -> str | object:
        """The worker's reply to one request; _TIMED_OUT when none came within `timeout` s, _GONE if it died."""
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except OSError:
            return _GONE
        try:
            reply = self.replies.get(timeout=timeout)
        except queue.Empty:
            return _TIMED_OUT
        if reply is None:
            return _GONE
        self.spent = bool(reply.get("spent"))
        return str(reply.get("output"))

    def kill(self, wait: float = 0.0) -> int | None:
        """End the process (after `wait` s for it to end by itself); its own exit code, None if it was killed."""
        if not wait and isinstance(self.proc, _Forked):  # no round trip: its fork server ends and reaps it
            self.proc.end()
            code = None
        else:
            try:
                code = self.proc.wait(timeout=wait) if wait else self.proc.poll()
            except subprocess.TimeoutExpired:
                code = None
            if code is None:
                self.proc.kill()
                if isinstance(self.proc, subprocess.Popen):  # a forked one is reaped by its fork server
                    # a process that held gigabytes takes a while to be torn down: reaped aside, not waited for
                    threading.Thread(target=self.proc.wait, daemon=True).start()
        with contextlib.suppress(OSError):  # stdout is closed by its reader thread's end of file
            self.proc.stdin.close()
        return code


def _is_duckdb(path: Path) -> bool:
    """Whether the file starts as a DuckDB database file does (its magic bytes, "DUCK" at offset 8)."""
    try:
        with open(path, "rb") as f:
            return f.read(12)[8:] == b"DUCK"
    except OSError:
        return False


# a fork server passes file descriptors over a Unix socket of datagrams in order (SOCK_SEQPACKET: Linux); elsewhere
# each worker is a new process
FORKS = sys.platform.startswith("linux") and hasattr(socket, "send_fds") and hasattr(socket, "SOCK_SEQPACKET")
_PIPES = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL, "text": True,
          "encoding": "utf-8"}


class _ForkServer:
    """`sql_worker --fork-server`: forks each worker from a process that has DuckDB and sqlglot imported already.

    Workers are named by a handle of ours, never by pid: only the fork server, which reaps them, knows whether a pid
    is still its worker's.
    """

    def __init__(self, command: list[str]):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self.proc = subprocess.Popen([*command, "--fork-server", str(theirs.fileno())], pass_fds=[theirs.fileno()],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
        self.sock = ours
        self._lock = threading.Lock()
        self._handles = itertools.count(1)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def fork(self) -> _Forked:
        """A new worker; it starts as soon as the fork server is up, without waiting for it here."""
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        handle = next(self._handles)
        try:
            with self._lock:
                socket.send_fds(self.sock, [json.dumps({"fork": handle}).encode()], [stdin_r, stdout_w])
        except OSError:
            pass  # the fork server is gone: the worker's output ends at once, and it is said not to start
        finally:
            os.close(stdin_r)
            os.close(stdout_w)
        return _Forked(self, handle, open(stdin_w, "w", encoding="utf-8"), open(stdout_r, encoding="utf-8"))

    def ask(self, request: dict) -> dict | None:
        """The fork server's reply to a request (see dptool.evaluate.sql_worker); None when it is gone."""
        with self._lock:
            try:
                self.sock.send(json.dumps(request).encode())
                reply = self.sock.recv(4096)
            except OSError:
                return None
        return json.loads(reply) if reply else None

    def tell(self, request: dict) -> None:
        """A request that has no reply."""
        with self._lock, contextlib.suppress(OSError):
            self.sock.send(json.dumps(request).encode())

    def close(self) -> None:
        """End the fork server (its workers end when their input closes, or were killed before)."""
        with contextlib.suppress(OSError):
            self.sock.close()
        try:
            self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            threading.Thread(target=self.proc.wait, daemon=True).start()


class _ForkServers:
    """This process's fork servers, one per worker command line (warehouse and limits), shared by the sandboxes that
    use it: a sandbox made for each attempt of a served run forks its workers at once, with no interpreter to start.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._servers: dict[tuple[str, ...], _ForkServer] = {}
        self._users: dict[tuple[str, ...], int] = {}

    def join(self, command: list[str]) -> bool:
        with self._lock:
            self._users[tuple(command)] = self._users.get(tuple(command), 0) + 1
        return True

    def get(self, command: list[str]) -> _ForkServer:
        """The live fork server of `command` (started now if there is none, or it died)."""
        with self._lock:
            server = self._servers.get(tuple(command))
            if server is None or not server.alive():
                if server is not None:
                    server.close()
                server = self._servers[tuple(command)] = _ForkServer(command)
            return server

    def leave(self, command: list[str]) -> None:
        """One sandbox less uses `command`; the last one out ends its fork server."""
        with self._lock:
            key = tuple(command)
            self._users[key] -= 1
            server = self._servers.pop(key, None) if not self._users[key] else None
            if not self._users[key]:
                del self._users[key]
        if server is not None:
            server.close()


_FORK_SERVERS = _ForkServers()


class _Forked:
    """A worker forked by a `_ForkServer`, with the part of `subprocess.Popen` that `_Worker` uses."""

    def __init__(self, server: _ForkServer, handle: int, stdin: TextIO, stdout: TextIO):
        self.server, self.handle, self.stdin, self.stdout = server, handle, stdin, stdout

    @property
    def pid(self) -> int | None:
        return (self.server.ask({"wait": self.handle, "timeout": 0}) or {}).get("pid")

    def _code(self, request: dict) -> int | None:
        reply = self.server.ask(request)
        return -1 if reply is None else reply["code"]

    def poll(self) -> int | None:
        return self._code({"wait": self.handle, "timeout": 0})

    def wait(self, timeout: float | None = None) -> int:
        code = self._code({"wait": self.handle, "timeout": START_TIMEOUT if timeout is None else timeout})
        if code is None:
            raise subprocess.TimeoutExpired(f"sql_worker {self.handle}", timeout)
        return code

    def kill(self) -> None:
        self._code({"kill": self.handle})

    def end(self) -> None:
        """SIGKILL unless it has exited, without waiting for the fork server to say so."""
        self.server.tell({"end": self.handle})


def _cell(value) -> str:
    text = "NULL" if value is None else repr(value) if isinstance(value, float) else str(value)
    text = " ".join(text.split())
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def render(result: Result, max_rows: int) -> str:
    """Rows as a pipe-separated table with a closing line that says how many there are."""
    lines = [" | ".join(result.columns)]
    lines += [" | ".join(_cell(v) for v in row) for row in result.rows]
    if result.truncated:
        lines.append(f"(first {max_rows} rows shown; the result has more: aggregate, filter or add LIMIT)")
    else:
        lines.append(f"({len(result.rows)} row{'s' if len(result.rows) != 1 else ''})")
    text = "\n".join(lines)
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + "\n(output cut at 20,000 characters)"
    return text
