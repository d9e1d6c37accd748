"""The child process that runs an agent's SQL: `python -m dptool.evaluate.sql_worker WAREHOUSE [options]`.

`dptool.evaluate.sandbox.Sandbox` starts one per task and talks to it in JSON lines on stdin/stdout. A query
that ignores DuckDB's interrupt (a huge list sort, sqlglot on a huge text) cannot be stopped inside one
process, so it runs here, where the parent can kill it; and the address space of this process is capped,
because DuckDB's memory_limit covers only its buffer manager, not the vectors of a scalar function.

Requests and replies, one JSON object a line:
    {"sql": "select ..."}  ->  {"output": "<the text table, or one line starting with error:>"}
                               (+ "spent": true after a query stopped at the memory or time limit: the worker
                               then exits, and the next query runs on a fresh one)
    {"schema": true}       ->  {"output": "- schema.table(column TYPE, ...)\\n..."}
At start the worker writes {"ready": true} once the warehouse is open, or {"error": "..."} and exits 1.

With `--fork-server FD` the process is a fork server instead: it imports DuckDB and sqlglot once, then forks one such
worker per request on the Unix socket FD (a new interpreter costs ~0.4 s; a fork, milliseconds). Each worker is still
a process of its own, with its own connection, time limit and address-space cap. Requests on the socket, one JSON
datagram each, with the handle the parent names the worker by (never its pid, which the system reuses once reaped):
    {"fork": H} + two file descriptors (the worker's stdin and stdout)  ->  no reply
    {"wait": H, "timeout": S}  ->  {"code": <exit code, minus the signal if killed; null while it runs>, "pid": P}
    {"kill": H}                ->  {"code": ..., "pid": P} (SIGKILL unless it has exited)
    {"end": H}                 ->  no reply (as kill, for a parent that needs no exit code and does not wait)
The fork server exits when the parent closes the socket.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import socket
import sys
import threading
import time
from typing import TextIO

import duckdb

from dptool.evaluate.sandbox import EXIT_STUCK, Result, render, stopped_message
from dptool.evaluate.sql_check import Refused, check_sql

# DuckDB settings of the agent's connection: the second wall behind the parser. No temp_directory: a read-only
# warehouse must not spill next to itself, so a query over the memory limit fails instead.
CONNECTION_CONFIG = {"enable_external_access": False, "autoinstall_known_extensions": False,
                     "autoload_known_extensions": False, "allow_community_extensions": False,
                     "temp_directory": "", "lock_configuration": True}
# room above DuckDB's memory_limit for what it allocates outside its buffer manager, Python and thread arenas
ADDRESS_SLACK_MB = 512
# run once before the worker says it is ready: sqlglot's and DuckDB's first-use costs stay out of the time limit
WARM_UP = "with t as (select 1 as a) select a, count(*) as n from t where a in (1, 2) group by a order by a limit 1"


def connect(path: str, *, memory_mb: int, threads: int) -> duckdb.DuckDBPyConnection:
    """The warehouse opened read-only with file, network, extension and settings access disabled."""
    config = {**CONNECTION_CONFIG, "memory_limit": f"{memory_mb}MB", "threads": threads}
    return duckdb.connect(path, read_only=True, config=config)


def _address_space_mb() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            found = re.search(r"^VmSize:\s+(\d+) kB", f.read(), re.MULTILINE)
    except OSError:
        return None
    return int(found.group(1)) // 1024 if found else None


def cap_address_space(memory_mb: int) -> None:
    """Cap this process's address space at what it has now plus the memory budget (Linux; a no-op elsewhere)."""
    try:
        import resource
    except ImportError:  # Windows: DuckDB's memory_limit and the time limit still hold
        return
    now = _address_space_mb()
    if now is None:
        return
    limit = (now + memory_mb + ADDRESS_SLACK_MB) * 2**20
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def schema(con: duckdb.DuckDBPyConnection) -> str:
    """The tables an agent may query, one line each: schema.table(column TYPE, ...)."""
    rows = con.execute(
        "select table_schema, table_name, column_name, data_type from information_schema.columns "
        "where table_schema not in ('information_schema', 'pg_catalog') "
        "order by table_schema, table_name, ordinal_position").fetchall()
    tables: dict[str, list[str]] = {}
    for name, table, column, dtype in rows:
        tables.setdefault(f"{name}.{table}", []).append(f"{column} {dtype}")
    return "\n".join(f"- {name}({', '.join(cols)})" for name, cols in tables.items())


class Runner:
    """One connection, one query at a time, each under the time limit: interrupt, then end the process.

    The limit is kept by one thread started with the runner, before the address space is capped: a timer thread
    started per query needs a new stack, which a query that used up the memory budget leaves no room for.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, *, timeout: float, grace: float, max_rows: int,
                 memory_mb: int):
        self.con, self.timeout, self.grace, self.max_rows, self.memory_mb = con, timeout, grace, max_rows, memory_mb
        # set by a query stopped at the memory or the time limit: the memory it took is not all given back (the
        # address space stays mapped, DuckDB keeps its buffers), so later queries would fail that run fine alone
        self.spent = False
        self._changed = threading.Condition()
        self._started: float | None = None  # when the running query started; None between queries
        threading.Thread(target=self._keep_the_limit, daemon=True).start()

    def run(self, sql: str) -> str:
        with self._changed:
            self._started = time.monotonic()
            self._changed.notify()
        try:
            return render(self._query(sql), self.max_rows)
        except Refused as exc:
            return f"error: {exc}"
        finally:
            with self._changed:
                self._started = None
                self._changed.notify()

    def _keep_the_limit(self) -> None:
        with self._changed:
            interrupted = None  # the start of the query last interrupted
            while True:
                started = self._started
                if started is None:
                    self._changed.wait()
                    continue
                now = time.monotonic()
                if interrupted != started:
                    if now >= started + self.timeout:
                        interrupted = started
                        self.con.interrupt()
                    else:
                        self._changed.wait(started + self.timeout - now)
                    continue
                # the parent kills this process at timeout + grace; this is for when the parent is gone
                if now >= started + self.timeout + 2 * self.grace:
                    os._exit(EXIT_STUCK)
                self._changed.wait(started + self.timeout + 2 * self.grace - now)

    def _query(self, sql: str) -> Result:
        try:
            check_sql(sql)
            cursor = self.con.execute(sql)
            columns = [d[0] for d in cursor.description or []]
            rows = cursor.fetchmany(self.max_rows + 1)
        except Refused:
            raise
        except duckdb.InterruptException:
            self.spent = True
            raise Refused(stopped_message(self.timeout)) from None
        except (duckdb.OutOfMemoryException, MemoryError):
            self.spent = True
            raise Refused(f"the query ran out of memory (the limit is {self.memory_mb} MB); "
                          f"make it cheaper: filter, aggregate or add LIMIT") from None
        except duckdb.Error as exc:
            raise Refused(" ".join(str(exc).split())[:500]) from None
        except Exception as exc:  # noqa: BLE001 - any failure is the agent's to see, never a crash of the run
            raise Refused(f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from None
        return Result(columns, rows[: self.max_rows], len(rows) > self.max_rows)


def _reply(out: TextIO, message: dict) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dptool.evaluate.sql_worker")
    parser.add_argument("warehouse")
    parser.add_argument("--timeout", type=float, required=True)
    parser.add_argument("--grace", type=float, required=True)
    parser.add_argument("--max-rows", type=int, required=True)
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--fork-server", type=int, default=None, metavar="FD")
    args = parser.parse_args(argv)
    # Ctrl-C reaches the whole process group: the parent stops this worker itself, with no traceback here
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if args.fork_server is not None:
        return fork_server(args, socket.socket(fileno=args.fork_server))
    out, sys.stdout = sys.stdout, sys.stderr  # nothing else may write to the protocol's stream
    return session(args, sys.stdin, out)


def session(args: argparse.Namespace, requests: TextIO, out: TextIO) -> int:
    """Open the warehouse, say so, then answer each request line until the input ends or a query spent the worker."""
    try:
        con = connect(args.warehouse, memory_mb=args.memory_mb, threads=args.threads)
        check_sql(WARM_UP)
        con.execute(WARM_UP).fetchall()
    except duckdb.Error as exc:
        _reply(out, {"error": " ".join(str(exc).split())})
        return 1
    runner = Runner(con, timeout=args.timeout, grace=args.grace, max_rows=args.max_rows, memory_mb=args.memory_mb)
    cap_address_space(args.memory_mb)
    _reply(out, {"ready": True})
    for line in requests:
        try:
            request = json.loads(line)
            output = schema(con) if request.get("schema") else runner.run(request["sql"])
        except Exception as exc:  # noqa: BLE001 - a bad request is answered, never fatal
            output = f"error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        if runner.spent:  # the parent starts a fresh worker for the next query; this one is done
            _reply(out, {"output": output, "spent": True})
            return 0
        _reply(out, {"output": output})
    return 0


def fork_server(args: argparse.Namespace, control: socket.socket) -> int:
    """Fork a worker (`session`) per request on `control` until the parent closes it (see the module's docstring).

    Single-threaded, so that a fork copies no lock held by another thread: DuckDB starts its threads only when a
    connection opens, in the worker.
    """
    check_sql(WARM_UP)  # sqlglot's first-use costs, paid once here for every worker
    pids: dict[int, int] = {}  # handle -> pid of each worker not yet reaped
    codes: dict[int, int] = {}  # handle -> exit code of each reaped one
    born: dict[int, int] = {}  # handle -> pid of every worker forked (for the parent's tests; reaped or not)
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(control, 4096, 2)
        except OSError:
            data, fds = b"", []
        if not data:  # the parent is gone or done; its workers end when their input closes
            return 0
        request = json.loads(data)
        if "fork" in request:
            pid = os.fork()
            if pid == 0:
                control.close()
                os._exit(_forked(args, *fds))
            for fd in fds:
                os.close(fd)
            pids[request["fork"]] = born[request["fork"]] = pid
            continue
        handle = request.get("wait", request.get("kill", request.get("end")))
        deadline = time.monotonic() + float(request.get("timeout") or 0)
        while True:
            _reap(pids, codes)
            if handle not in pids or time.monotonic() >= deadline:
                break
            time.sleep(0.005)
        if ("kill" in request or "end" in request) and handle in pids:
            with contextlib.suppress(ProcessLookupError):  # not reaped, so the pid is still this worker's
                os.kill(pids[handle], signal.SIGKILL)
        if "end" not in request:
            control.send(json.dumps({"code": codes.get(handle, None if handle in pids else -1),
                                     "pid": born.get(handle)}).encode())


def _reap(pids: dict[int, int], codes: dict[int, int]) -> None:
    for handle, pid in list(pids.items()):
        with contextlib.suppress(ChildProcessError):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                codes[handle] = os.waitstatus_to_exitcode(status)
                del pids[handle]


def _forked(args: argparse.Namespace, stdin_fd: int, stdout_fd: int) -> int:
    """The body of a forked worker: its requests on `stdin_fd`, its replies on `stdout_fd`."""
    try:
        os.dup2(stdin_fd, 0)
        os.dup2(stdout_fd, 1)
        os.close(stdin_fd)
        os.close(stdout_fd)
        requests = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - open for the life of the process
        out = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = sys.stderr
        return session(args, requests, out)
    except BaseException:  # noqa: BLE001 - never back into the fork server's loop
        return 1


if __name__ == "__main__":
    sys.exit(main())
