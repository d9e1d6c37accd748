"""The agent's SQL sandbox: each refusal with the error text the agent sees, DuckDB's own second wall, and the
worker process that holds the time and memory limits (issue 16)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
import yaml

from dptool.evaluate.sandbox import Sandbox
from dptool.evaluate.sql_check import check_sql
from dptool.evaluate.sql_worker import connect

ONLY = "run_sql takes exactly one read-only SELECT or WITH query"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    path = tmp_path_factory.mktemp("sandbox") / "warehouse.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create schema shop")
    con.execute("create table shop.orders as select range as id, range * 1.5 as amount, "
                "case when range % 2 = 0 then 'SP' else 'RJ' end as state from range(10)")
    con.close()
    (path.parent / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sandbox(warehouse):
    # one worker for the module's tests (each start imports DuckDB): they only read
    with Sandbox(warehouse, timeout=0.5, max_rows=3) as sb:
        yield sb


REFUSALS = {
    "insert": ("insert into shop.orders values (99, 1.0, 'SP')", f"error: refused: INSERT writes data; {ONLY}"),
    "update": ("update shop.orders set amount = 0", f"error: refused: UPDATE writes data; {ONLY}"),
    "delete": ("delete from shop.orders", f"error: refused: DELETE writes data; {ONLY}"),
    "truncate": ("truncate shop.orders", f"error: refused: TRUNCATE writes data; {ONLY}"),
    "write-in-cte": ("with x as (select 1) insert into shop.orders select * from x",
                     f"error: refused: INSERT writes data; {ONLY}"),
    "create": ("create table shop.t as select 1", f"error: refused: CREATE is DDL; {ONLY}"),
    "drop": ("drop table shop.orders", f"error: refused: DROP is DDL; {ONLY}"),
    "alter": ("alter table shop.orders add column x int", f"error: refused: ALTER is DDL; {ONLY}"),
    "attach": ("attach 'other.duckdb' as other", f"error: refused: ATTACH opens another database; {ONLY}"),
    "detach": ("detach warehouse", f"error: refused: DETACH opens another database; {ONLY}"),
    "copy": ("copy shop.orders to 'out.csv'", f"error: refused: COPY reads or writes files; {ONLY}"),
    "export": ("export database 'out'", f"error: refused: EXPORT reads or writes files; {ONLY}"),
    "pragma": ("pragma table_info('shop.orders')", f"error: refused: PRAGMA reads or changes settings; {ONLY}"),
    "set": ("set threads = 1", f"error: refused: SET changes a setting; {ONLY}"),
    "reset": ("reset threads", f"error: refused: RESET changes a setting; {ONLY}"),
    "install": ("install httpfs", f"error: refused: INSTALL installs or loads an extension; {ONLY}"),
    "load": ("load httpfs", f"error: refused: LOAD installs or loads an extension; {ONLY}"),
    "two-statements": ("select 1; select 2", f"error: refused: 2 statements; {ONLY} per call"),
    "empty": ("  -- nothing\n", f"error: refused: empty SQL; {ONLY}"),
    "read_csv": ("select * from read_csv('data.csv')",
                 "error: refused: table function read_csv() may read files, URLs or other SQL; "
                 "query the warehouse tables"),
    "read_parquet": ("select * from read_parquet('s3://bucket/x.parquet')",
                     "error: refused: table function read_parquet() may read files, URLs or other SQL; "
                     "query the warehouse tables"),
    "read_json_auto": ("select * from shop.orders o join read_json_auto('x.json') j on true",
                       "error: refused: table function read_json_auto() may read files, URLs or other SQL; "
                       "query the warehouse tables"),
    "glob": ("select * from glob('*')",
             "error: refused: table function glob() may read files, URLs or other SQL; query the warehouse tables"),
    "query-function": ("select * from query('select 1')",
                       "error: refused: table function query() may read files, URLs or other SQL; "
                       "query the warehouse tables"),
    "read_csv-in-subquery": ("select * from shop.orders where id in (select a from read_csv('data.csv'))",
                             "error: refused: table function read_csv() may read files, URLs or other SQL; "
                             "query the warehouse tables"),
    "file-string-table": ("select * from 'data.csv'",
                          "error: refused: 'data.csv' names a file or URL; query the warehouse tables"),
    "url-string-table": ("select * from 'https://example.com/x.parquet'",
                         "error: refused: 'https://example.com/x.parquet' names a file or URL; "
                         "query the warehouse tables"),
    "explain": ("explain select 1", f"error: refused: EXPLAIN is not a query; {ONLY}"),
    # issue 23: DuckDB reads a table it cannot find as a file, its name's parts joined by dots
    "unquoted-csv": ("select * from passwd.csv", "error: refused: 'passwd.csv' names a file (DuckDB reads a table it "
                     "cannot find as a file path); query the warehouse tables"),
    "unquoted-three-parts": ("select * from a.b.csv", "error: refused: 'a.b.csv' names a file (DuckDB reads a table "
                             "it cannot find as a file path); query the warehouse tables"),
    "unquoted-parquet": ("select * from data.parquet", "error: refused: 'data.parquet' names a file (DuckDB reads a "
                         "table it cannot find as a file path); query the warehouse tables"),
    "unquoted-json-joined": ("select * from shop.orders o join x.json j on true", "error: refused: 'x.json' names a "
                             "file (DuckDB reads a table it cannot find as a file path); query the warehouse tables"),
    "quoted-parts": ('select * from "passwd"."CSV"', "error: refused: 'passwd.CSV' names a file (DuckDB reads a table "
                     "it cannot find as a file path); query the warehouse tables"),
    "checkpoint": ("checkpoint", f"error: refused: CHECKPOINT is not a query; {ONLY}"),
    # views and functions that describe the machine: the database file's path is the bundle's folder, where its
    # tasks.jsonl (every gold) lies (an MCP session found them: `select path from duckdb_databases`)
    "databases-view": ("select database_name, path from duckdb_databases", "error: refused: duckdb_databases "
                       "describes this machine (files, settings), not the warehouse; query the warehouse tables or "
                       "information_schema"),
    "database-list": ("select file from main.pragma_database_list", "error: refused: pragma_database_list describes "
                      "this machine (files, settings), not the warehouse; query the warehouse tables or "
                      "information_schema"),
    "settings-view": ("select value from duckdb_settings where name = 'home_directory'", "error: refused: "
                      "duckdb_settings describes this machine (files, settings), not the warehouse; query the "
                      "warehouse tables or information_schema"),
    "setting": ("select current_setting('temp_directory') as t", "error: refused: current_setting() describes this "
                "machine, not the warehouse; query the warehouse tables"),
}


@pytest.mark.parametrize(("sql", "error"), list(REFUSALS.values()), ids=list(REFUSALS))
def test_refused_with_the_error_the_agent_sees(sandbox, sql, error):
    assert sandbox.run(sql) == error


def test_nothing_refused_was_written(sandbox, warehouse):
    for sql, _ in REFUSALS.values():
        sandbox.run(sql)
    assert sandbox.run("select count(*) as n, sum(amount) as total from shop.orders") == "n | total\n10 | 67.5\n(1 row)"
    assert not (warehouse.parent / "out.csv").exists()


def test_read_only_queries_run(sandbox):
    assert sandbox.run("with s as (select state, count(*) as n from shop.orders group by state) "
                       "select * from s order by state") == "state | n\nRJ | 5\nSP | 5\n(2 rows)"
    assert sandbox.run("select 1 as a union all select 2") == "a\n1\n2\n(2 rows)"
    assert sandbox.run("select count(*) as n from range(3)") == "n\n3\n(1 row)"
    assert sandbox.run("select count(*) as n from information_schema.columns where table_schema = 'shop'") == \
        "n\n3\n(1 row)"


@pytest.mark.parametrize(("sql", "shown"), [
    ("select 1 as a; -- done", "a\n1\n(1 row)"),
    ("select 1 as a; /* that is all */", "a\n1\n(1 row)"),
    ('with "q1.2018" as (select count(*) as n from shop.orders) select n from "q1.2018"', "n\n10\n(1 row)"),
    ('with "orders.csv" as (select 2 as n) select n from "orders.csv"', "n\n2\n(1 row)"),
], ids=["trailing-comment", "trailing-block-comment", "cte-with-a-dot", "cte-named-like-a-file"])
def test_a_trailing_comment_and_a_cte_named_with_a_dot_are_queries(sandbox, sql, shown):
    assert sandbox.run(sql) == shown


def test_rows_are_capped(sandbox):
    assert sandbox.run("select id from shop.orders order by id") == \
        "id\n0\n1\n2\n(first 3 rows shown; the result has more: aggregate, filter or add LIMIT)"


def test_a_slow_query_is_stopped_at_the_time_limit(sandbox):
    assert sandbox.run("select sum(a.range * b.range) from range(100000) a, range(100000) b") == \
        "error: query stopped after 0.5 s (the time limit); make it cheaper: filter, aggregate or add LIMIT"
    assert sandbox.run("select 1 as still_usable") == "still_usable\n1\n(1 row)"


def test_database_errors_reach_the_agent_in_one_line(sandbox):
    out = sandbox.run("select * from shop.nope")
    assert out.startswith("error: Catalog Error: Table with name nope does not exist!") and "\n" not in out
    assert sandbox.run("selec 1").startswith("error: cannot parse SQL at line 1")


@pytest.mark.parametrize("sql", ["select * from read_csv('data.csv')", "select * from 'data.csv'",
                                 "attach 'other.duckdb' as other", "create table shop.t as select 1",
                                 "set threads = 1"], ids=["read_csv", "file-table", "attach", "create", "set"])
def test_duckdb_refuses_too_when_the_parser_is_bypassed(warehouse, sql):
    con = connect(str(warehouse), memory_mb=256, threads=1)  # the worker's connection, without the parser
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql.replace("data.csv", str(warehouse.parent / "data.csv")))
    assert any(word in str(info.value) for word in ("disabled by configuration", "read-only", "locked"))


def test_schema_lists_every_table_with_its_columns(sandbox):
    assert sandbox.schema() == "- shop.orders(id BIGINT, amount DECIMAL(21,1), state VARCHAR)"


# ---- issue 16: nothing crashes the loop, the limits hold, nothing carries over, the file stays as it was ----------

STOPPED = "error: query stopped after {:g} s (the time limit); make it cheaper: filter, aggregate or add LIMIT"
FUZZ = yaml.safe_load((Path(__file__).parent / "fixtures" / "sandbox_fuzz.yml").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("sql", "error"), [
    ("SELECT 'abc", "error: cannot parse SQL: Error tokenizing 'SELECT 'ab' (an unclosed quote or comment?)"),
    # 600 deep: past plain sqlglot's limit (45) and sqlglotc's (about 500), the `fast` extra's compiled sqlglot
    ("SELECT " + "(" * 600 + "1" + ")" * 600, "error: cannot parse SQL: nested too deeply; flatten the parentheses or "
                                            "use a CTE"),
    ("SELECT INTERVAL 100000000 YEAR", "error: OverflowError: Python int too large to convert to C int"),
], ids=["token-error", "recursion-error", "overflow-error"])
def test_a_query_that_crashed_the_agent_loop_is_a_tool_error(sandbox, sql, error):
    assert sandbox.run(sql) == error
    assert sandbox.run("select 1 as still_usable") == "still_usable\n1\n(1 row)"


def test_a_query_that_ignores_the_interrupt_is_killed_within_twice_the_limit(warehouse):
    # DuckDB does not look at its interrupt while it sorts one huge list: 37.6 s and 5.5 GB with a 1 s limit
    with Sandbox(warehouse, timeout=1) as sb:
        start = time.monotonic()
        out = sb.run("SELECT len(list_sort(list_reverse(range(60000000))))")
        elapsed = time.monotonic() - start
        assert out == STOPPED.format(1) and elapsed < 2.0, (out, elapsed)
        assert sb.run("select 2 as next_query_runs") == "next_query_runs\n2\n(1 row)"


def test_memory_is_capped_per_query(warehouse):
    # an 8 GB list, with a time limit it would not reach; a child process measures the peak of its own workers
    # (this one's children include every CLI run of the session)
    script = f"""
import json, resource, time
from dptool.evaluate.sandbox import Sandbox
with Sandbox({str(warehouse)!r}, timeout=60, memory_mb=256) as sb:
    start = time.monotonic()
    out = sb.run("select list(range) from range(1000000000)")
    elapsed = time.monotonic() - start
time.sleep(0.5)  # the killed worker is reaped aside
print(json.dumps({{"out": out, "elapsed": elapsed,
                  "peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}}))
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["out"] == "error: the query ran out of memory (the limit is 256 MB); make it cheaper: filter, " \
                           "aggregate or add LIMIT", found
    assert found["peak_mb"] < 1024 and found["elapsed"] < 10, found


def test_a_huge_sql_text_is_refused_before_any_parsing(sandbox):
    in_list = "select * from shop.orders where id in (" + ", ".join(str(i) for i in range(400_000)) + ")"
    assert len(in_list) > 2_600_000
    start = time.monotonic()
    assert sandbox.run(in_list) == (f"error: refused: the SQL is {len(in_list):,} characters, at most 50,000; "
                                    f"run_sql takes exactly one read-only SELECT or WITH query of a usual size")
    assert time.monotonic() - start < 0.1


def test_parsing_counts_toward_the_time_limit(warehouse):
    # a sum of 24,000 ones: under the size cap, and the slowest text to parse we know of (~0.2 s here); the limit is
    # set from the parse time measured here, so a faster machine (or sqlglotc) cannot make the parse fit in it
    long_sum = "select " + "+".join("1" for _ in range(24_000))
    assert len(long_sum) < 50_000  # not refused for its size
    start = time.monotonic()
    check_sql(long_sum)
    parse = time.monotonic() - start
    timeout = max(0.01, round(parse / 5, 3))
    with Sandbox(warehouse, timeout=timeout) as sb:
        start = time.monotonic()
        assert sb.run(long_sum) == STOPPED.format(timeout)
        assert time.monotonic() - start < max(parse * 0.8, timeout * 3)  # stopped before the parse could end


def test_no_session_state_carries_from_one_task_to_the_next(sandbox):
    sandbox.new_session()
    sandbox.run("select setseed(0.42)")
    first, second = sandbox.run("select random() as r"), sandbox.run("select random() as r")
    sandbox.run("select setseed(0.42)")
    assert sandbox.run("select random() as r") == first  # within a task the seed holds
    sandbox.new_session()  # the next task: the seed's next value must not come out
    assert sandbox.run("select random() as r") != second


def test_fuzz_every_hostile_query_is_refused_or_stopped_and_the_warehouse_is_unchanged(warehouse):
    queries = [(kind, sql) for kind, sqls in FUZZ.items() for sql in sqls]
    assert len(queries) >= 100
    before = hashlib.sha256(warehouse.read_bytes()).hexdigest()
    files = sorted(p.name for p in warehouse.parent.iterdir())
    limit = 0.5
    slow, wrong = [], []
    with Sandbox(warehouse, timeout=limit, memory_mb=256) as sb:
        for kind, sql in queries:
            sb.ready()  # a worker started after a kill is not the query's time
            start = time.monotonic()
            out = sb.run(sql)
            elapsed = time.monotonic() - start
            if elapsed > 2 * limit:
                slow.append((round(elapsed, 2), sql))
            if kind == "bombs":
                held = out in (STOPPED.format(limit), "error: the query ran out of memory (the limit is 256 MB); "
                               "make it cheaper: filter, aggregate or add LIMIT")
            elif kind == "crashers":
                held = out.startswith("error: ") and "\n" not in out
            else:
                held = out.startswith("error: refused: ") and "\n" not in out
            if not held:
                wrong.append((kind, sql, out))
        assert sb.run("select count(*) as n, sum(amount) as total from shop.orders") == \
            "n | total\n10 | 67.5\n(1 row)"
    assert wrong == [] and slow == []
    assert hashlib.sha256(warehouse.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in warehouse.parent.iterdir()) == files


def test_a_worker_that_dies_is_one_error_line_and_the_next_query_gets_a_new_one(warehouse):
    with Sandbox(warehouse, timeout=1) as sb:
        sb._worker.proc.kill()  # as the kernel's OOM killer would
        sb._worker.proc.wait()
        assert sb.run("select 1 as a") == ("error: the SQL engine died on this query (exit code -9); nothing was "
                                           "changed; make it cheaper or simpler")
        assert sb.run("select 1 as a") == "a\n1\n(1 row)"


# ---- issue 23: a worker that hit a limit is not used again; limits are finite ----------------------------------------

def test_after_a_memory_stop_the_next_queries_run_on_a_fresh_worker(warehouse):
    """The issue's queries: a list of a billion values (over the memory limit) and a 10M-row sort; on the same worker,
    queries that run alone then failed with "ran out of memory" (the address space it took stays mapped)."""
    with Sandbox(warehouse, timeout=20) as sb:  # the default memory limit, 1,024 MB
        pid = sb._worker.proc.pid
        assert sb.run("select len(list(range)) from range(1000000000)") == \
            "error: the query ran out of memory (the limit is 1024 MB); make it cheaper: filter, aggregate or add LIMIT"
        assert sb._worker.proc.pid != pid  # the next query gets a new worker
        sb.run("select range from range(10000000) order by random()")
        outs = [sb.run(f"select len(list(range)) as n from range({5_000_000 + k})") for k in range(40)]
        assert outs == [f"n\n{5_000_000 + k}\n(1 row)" for k in range(40)]


def test_after_a_time_stop_the_next_query_runs_on_a_fresh_worker(warehouse):
    with Sandbox(warehouse, timeout=0.5) as sb:
        pid = sb._worker.proc.pid
        assert sb.run("select sum(a.range * b.range) from range(100000) a, range(100000) b") == STOPPED.format(0.5)
        assert sb._worker.proc.pid != pid
        assert sb.run("select 1 as a") == "a\n1\n(1 row)"


@pytest.mark.parametrize(("option", "value"), [("timeout", float("nan")), ("timeout", float("inf")),
                                               ("timeout", 1e10), ("timeout", 0), ("memory_mb", 10**12),
                                               ("max_rows", 0)])
def test_a_limit_that_is_no_limit_is_refused(warehouse, option, value):
    from dptool.errors import DptoolError

    with pytest.raises(DptoolError, match=f"the sandbox's {option} is"):
        Sandbox(warehouse, **{option: value})


# ---- held-out round four (issue 23's "done when") --------------------------------------------------------------

MACHINE = "describes this machine (files, settings), not the warehouse; query the warehouse tables or " \
          "information_schema"
ROUND_FOUR_REFUSED = {
    # DuckDB's pg_catalog mirrors duckdb_settings: allowed_paths held the bundle's folder, secret_directory the home
    "pg-settings": ("select name, setting from pg_catalog.pg_settings", f"error: refused: pg_settings {MACHINE}"),
    "pg-settings-bare": ("select * from pg_settings", f"error: refused: pg_settings {MACHINE}"),
    "pg-settings-three-parts": ("select * from system.pg_catalog.PG_SETTINGS",
                                f"error: refused: PG_SETTINGS {MACHINE}"),
    "pg-settings-in-a-subquery": ("select count(*) from shop.orders where exists (select 1 from pg_settings)",
                                  f"error: refused: pg_settings {MACHINE}"),
    "pg-prepared-statements": ("select * from pg_prepared_statements", f"error: refused: pg_prepared_statements "
                                                                       f"{MACHINE}"),
    "duckdb-functions-call": ("select * from duckdb_functions()", "error: refused: table function duckdb_functions() "
                                                                  "may read files, URLs or other SQL; query the "
                                                                  "warehouse tables"),
    "temporary-files-call": ("select * from duckdb_temporary_files()", "error: refused: table function "
                                                                       "duckdb_temporary_files() may read files, URLs "
                                                                       "or other SQL; query the warehouse tables"),
    "read-blob-in-exists": ("select 1 from range(1) where exists (select * from read_blob('/etc/passwd'))",
                            "error: refused: table function read_blob() may read files, URLs or other SQL; query the "
                            "warehouse tables"),
    "glob-in-unnest": ("select unnest(glob('*'))", "error: refused: glob() reads files, URLs or other SQL; query the "
                                                   "warehouse tables"),
    "from-first-file": ("from 'tasks.jsonl'", "error: refused: 'tasks.jsonl' names a file or URL; query the "
                                              "warehouse tables"),
    "quoted-file-identifier": ('select * from "tasks.jsonl"', "error: refused: 'tasks.jsonl' names a file or URL; "
                                                              "query the warehouse tables"),
    "schema-and-file": ('select * from shop."orders.csv"', "error: refused: 'orders.csv' names a file or URL; query "
                                                           "the warehouse tables"),
    "summarize": ("summarize shop.orders", f"error: refused: SUMMARIZE is not a query; {ONLY}"),
    "explain": ("explain select 1", f"error: refused: EXPLAIN is not a query; {ONLY}"),
    "call": ("call pragma_database_list()", f"error: refused: CALL is not a query; {ONLY}"),
}


@pytest.mark.parametrize(("sql", "error"), list(ROUND_FOUR_REFUSED.values()), ids=list(ROUND_FOUR_REFUSED))
def test_round_four_escapes_are_refused(sandbox, sql, error):
    assert sandbox.run(sql) == error


@pytest.mark.parametrize(("sql", "out"), [
    ("from shop.orders select count(*) as n", "n\n10\n(1 row)"),
    ("with pg_settings as (select 1 as a) select a from pg_settings", "a\n1\n(1 row)"),
    ("select * from generate_series(1, 2) t(x)", "x\n1\n2\n(2 rows)"),
    ("select x from unnest(['a']) t(x)", "x\na\n(1 row)"),
], ids=["from-first", "cte-named-like-a-machine-view", "generate-series", "unnest"])
def test_round_four_plain_queries_still_run(sandbox, sql, out):
    assert sandbox.run(sql) == out


def test_round_four_a_recursive_bomb_is_stopped_and_the_next_worker_is_fresh(warehouse):
    with Sandbox(warehouse, timeout=0.5) as sb:
        pid = sb._worker.proc.pid
        assert sb.run("with recursive r(n) as (select 1 union all select n + 1 from r) select count(*) from r") == \
            STOPPED.format(0.5)
        assert sb._worker.proc.pid != pid
        assert sb.run("select count(*) as n from shop.orders") == "n\n10\n(1 row)"


@pytest.mark.parametrize(("option", "value"), [
    ("timeout", -1), ("timeout", float("-inf")), ("timeout", "5"), ("memory_mb", float("nan")), ("memory_mb", -1),
    ("memory_mb", 63), ("max_rows", True), ("max_rows", 10_001), ("max_rows", float("inf")), ("timeout", 3600.5),
], ids=["negative-timeout", "minus-inf-timeout", "timeout-as-text", "nan-memory", "negative-memory", "tiny-memory",
        "rows-as-boolean", "too-many-rows", "inf-rows", "timeout-over-an-hour"])
def test_round_four_a_limit_that_is_no_limit_is_refused(warehouse, option, value):
    from dptool.errors import DptoolError

    with pytest.raises(DptoolError, match=f"the sandbox's {option} is"):
        Sandbox(warehouse, **{option: value})


# ---- a worker ready before a query needs it ------------------------------------------------------------------------

def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] not in ("Z", "X")
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux; reads /proc")
def test_the_next_session_s_worker_is_forked_and_ready_before_the_session_starts(warehouse):
    with Sandbox(warehouse, timeout=5) as sb:
        assert sb.run("select setseed(0.1) as s") == "s\nNULL\n(1 row)"
        spare = sb._spare  # started with this session's worker, while its task runs
        assert spare is not None and spare.wait_ready(60) is None
        forks = sb._worker.proc.server.proc.pid
        for worker in (sb._worker, spare):  # forked by the fork server, not started as a new interpreter by us
            assert Path(f"/proc/{worker.proc.pid}/stat").read_text().split(")")[-1].split()[1] == str(forks)
        sb.new_session()
        assert sb._worker is spare and sb._worker.state == ""  # nothing to wait for
        assert sb.run("select 1 as a") == "a\n1\n(1 row)"
        assert sb._spare is not None and sb._spare is not spare
        pids = [sb._worker.proc.pid, sb._spare.proc.pid, forks]
    deadline = time.monotonic() + 30
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in pids if _running(pid)] == []  # closing the sandbox leaves no process behind
