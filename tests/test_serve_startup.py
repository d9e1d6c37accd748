"""`dptool serve` starts light: nothing heavy (DuckDB, sqlglot, dbt, numpy, ...) is imported by the server process
before it has answered `initialize`, nor for what needs none of it (the tool list); the SQL worker runs in processes
of its own, started at once. Checked by what the server process imports (`python -X importtime`), not by a timing.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.small_bundle import write_bundle

# top-level packages the server process must not import before they are needed
HEAVY = ("dbt", "duckdb", "sqlglot", "pandas", "numpy", "networkx", "inspect_ai", "rank_bm25", "agate", "jinja2",
         "pyarrow", "openai", "yaml")


def _imported(importtime: str) -> set[str]:
    """The top-level packages a `python -X importtime` stderr names."""
    return {m.group(1).split(".")[0] for m in re.finditer(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)", importtime,
                                                          re.MULTILINE)}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return write_bundle(tmp_path_factory.mktemp("startup") / "bundle")


def test_the_serve_command_s_modules_import_nothing_heavy():
    code = ("import sys, dptool.cli.main, dptool.cli.serve, dptool.evaluate.environment, dptool.evaluate.serve, "
            "dptool.evaluate.sandbox, dptool.evaluate.score; print(' '.join(sorted(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    loaded = {name.split(".")[0] for name in proc.stdout.split()}
    assert "mcp" in loaded  # the imports did run
    assert sorted(loaded & set(HEAVY)) == []


def _message(proc: subprocess.Popen, message: dict) -> None:
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()


def _reply(proc: subprocess.Popen, request_id: int) -> dict:
    for line in proc.stdout:
        reply = json.loads(line)
        if reply.get("id") == request_id:
            return reply
    raise AssertionError(f"dptool serve closed stdout before replying to request {request_id}")


def test_serve_answers_initialize_and_lists_its_tools_before_importing_anything_heavy(bundle, tmp_path):
    """The SQL worker starts at once, in processes of its own; the server process itself imports DuckDB, sqlglot
    or the BM25 index only for a call that needs them. Nothing is called here, so nothing heavy may appear, even
    a while after the replies (a server that loads them in the background fails too)."""
    log = tmp_path / "importtime.txt"  # a file, not a pipe: nobody reads a pipe while the server writes to it
    with open(log, "w", encoding="utf-8") as stderr:
        proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "dptool.cli", "serve", str(bundle),
                                 "--out", str(tmp_path / "run")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=stderr, text=True)
    try:
        _message(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": "startup-test", "version": "1"}}})
        assert "result" in _reply(proc, 1)
        _message(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _message(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        tools = {t["name"] for t in _reply(proc, 2)["result"]["tools"]}
        assert {"execute_sql", "next_task", "submit_answer"} <= tools
        time.sleep(1.0)  # room for anything started in the background to show
    finally:
        proc.kill()  # no shutdown path: only what the server imported while serving is on stderr
        proc.communicate(timeout=60)
    loaded = _imported(log.read_text(encoding="utf-8"))
    assert "mcp" in loaded and "dptool" in loaded  # -X importtime did report
    assert sorted(loaded & set(HEAVY)) == []


def test_a_warehouse_that_is_no_duckdb_file_is_refused_at_start_in_one_line(tmp_path):
    """The server opens the warehouse in the background; what is no DuckDB file at all is still said at start."""
    bundle = write_bundle(tmp_path / "bundle")
    (bundle / "warehouse.duckdb").write_bytes(b"this is no database\n" * 100)
    proc = subprocess.run([sys.executable, "-m", "dptool.cli", "serve", str(bundle), "--out", str(tmp_path / "run")],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr == f"error: {bundle / 'warehouse.duckdb'}: not a DuckDB database; expected a bundle written " \
                          "by `dptool generate`\n"
