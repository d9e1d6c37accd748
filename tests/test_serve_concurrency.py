"""`dptool serve` under concurrency, with real server processes and the mcp SDK's own client: a stdio server per
tool call with calls in parallel, two servers on one run folder, four agents on one HTTP server. Every call lands in
its attempt's log, an attempt is handed out once and answered once; oversized arguments are kept by digest; a
request the SDK cannot read gets a reply; a bundle replaced under a running server stops it in one line."""

from __future__ import annotations

import hashlib
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from dptool.evaluate.environment import Environment
from dptool.evaluate.run_folder import OVERSIZED
from dptool.evaluate.score import load_tasks
from dptool.evaluate.served_run import ServedRun
from tests.served import serve_http, serve_params, text_of, tiny_bundle

ALREADY = re.compile(r"error: the answer to pq_1 \(attempt 1\) was already recorded at [\d-]+ [\d:]+ UTC "
                     r"\(attempt_id ([0-9a-f]{10})\); this one is not recorded")


async def one_call(bundle: Path, out: Path, tool: str, arguments: dict, *args: str) -> tuple[str, bool]:
    """One tool call through a server process of its own, as LangChain's MultiServerMCPClient makes it."""
    async with stdio_client(serve_params(bundle, out, *args)) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        result = await s.call_tool(tool, arguments)
    return text_of(result), bool(result.is_error)


async def gather(*calls) -> list:
    """Run the coroutine functions at once; their results in order."""
    results: list = [None] * len(calls)

    async def run(i, fn):
        results[i] = await fn()

    async with anyio.create_task_group() as tg:
        for i, fn in enumerate(calls):
            tg.start_soon(run, i, fn)
    return results


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.is_file() else []


def test_parallel_calls_through_a_server_per_call_all_land_and_an_attempt_is_answered_once(tmp_path):
    bundle, out = tiny_bundle(tmp_path), tmp_path / "run"
    sqls = [f"SELECT {i} AS probe, count(*) AS n FROM shop.orders" for i in (1, 2, 3)]

    async def scenario():
        handed = json.loads((await one_call(bundle, out, "next_task", {}))[0])
        again = json.loads((await one_call(bundle, out, "next_task", {}))[0])  # its server is gone: it goes on
        assert (again["attempt_id"], again["task_id"]) == (handed["attempt_id"], "pq_1") and "before" in again["note"]
        queries = await gather(*[lambda sql=sql: one_call(bundle, out, "execute_sql", {"sql": sql}) for sql in sqls])
        submits = await gather(
            lambda: one_call(bundle, out, "submit_answer", {"task_id": "pq_1", "answer": {"value": 62.25},
                                                            "attempt_id": handed["attempt_id"]}),
            lambda: one_call(bundle, out, "submit_answer", {"task_id": "pq_1", "answer": {"value": 99}}))
        late = await one_call(bundle, out, "submit_answer", {"task_id": "pq_1", "answer": {"value": 1}})
        return handed, queries, submits, late

    handed, queries, submits, late = anyio.run(scenario)
    assert handed["task_id"] == "pq_1" and re.fullmatch(r"[0-9a-f]{10}", handed["attempt_id"]), handed
    for (text, error), i in zip(queries, (1, 2, 3), strict=True):
        assert not error and text.splitlines()[1].startswith(f"{i} "), text
    recorded = [text for text, error in submits if not error]
    refused = [text for text, error in submits if error] + [late[0]]
    assert len(recorded) == 1 and recorded[0].startswith("recorded the answer to pq_1 (attempt 1 of 1)"), submits
    assert len(refused) == 2 and all(ALREADY.fullmatch(t).group(1) == handed["attempt_id"] for t in refused), refused
    answer, = lines(out / "answers.jsonl")
    winner = {"value": 62.25} if not submits[0][1] else {"value": 99}
    assert (answer["task_id"], answer["attempt"], answer["answer"], answer["tool_calls"]) == ("pq_1", 1, winner, 3)
    transcript = json.loads((out / answer["transcript"]).read_text(encoding="utf-8"))
    tools = [c["tool"] for c in transcript["calls"]]
    assert tools == ["next_task", "next_task", "execute_sql", "execute_sql", "execute_sql", "submit_answer"], tools
    assert {c["arguments"]["sql"] for c in transcript["calls"] if c["tool"] == "execute_sql"} == set(sqls)
    assert transcript["finished"] is True and transcript["answer"] == winner
    assert transcript["calls"][-1]["arguments"]["answer"] == winner
    # the refused answers are kept too, outside the answered attempt, with its handle
    outside = lines(out / "transcripts" / "outside-tasks.jsonl")
    assert [(c["tool"], c["attempt_id"], c["error"]) for c in outside] == [("submit_answer", handed["attempt_id"],
                                                                            True)] * 2


def test_two_servers_on_one_folder_hand_out_distinct_attempts(tmp_path):
    bundle, out = tiny_bundle(tmp_path, n=3), tmp_path / "run"

    async def two(args_a: tuple, args_b: tuple, steps):
        async with stdio_client(serve_params(bundle, out, *args_a)) as (ra, wa), ClientSession(ra, wa) as a, \
                stdio_client(serve_params(bundle, out, *args_b)) as (rb, wb), ClientSession(rb, wb) as b:
            await gather(a.initialize, b.initialize)
            return await steps(a, b)

    async def both_work(a, b):
        handed = await gather(*[lambda s=s: s.call_tool("next_task", {}) for s in (a, b)])
        handed = [json.loads(text_of(h)) for h in handed]
        for s, h in zip((a, b), handed, strict=True):
            await s.call_tool("execute_sql", {"sql": f"SELECT '{h['task_id']}' AS mine"})
            assert not (await s.call_tool("submit_answer", {"task_id": h["task_id"], "answer": "1"})).is_error
        return handed

    handed = anyio.run(two, (), (), both_work)
    assert len({h["task_id"] for h in handed}) == 2 and len({h["attempt_id"] for h in handed}) == 2, handed
    for h in handed:
        transcript = json.loads((out / "transcripts" / f"{h['task_id']}-1.json").read_text(encoding="utf-8"))
        assert [c["tool"] for c in transcript["calls"]] == ["next_task", "execute_sql", "submit_answer"]
        assert transcript["calls"][1]["reply"] == f"mine\n{h['task_id']}\n(1 row)"

    async def same_task(a, b):
        first = json.loads(text_of(await a.call_tool("next_task", {})))
        taken = json.loads(text_of(await b.call_tool("next_task", {})))
        await a.call_tool("submit_answer", {"task_id": first["task_id"], "answer": "2"})
        done = json.loads(text_of(await b.call_tool("next_task", {})))
        return first, taken, done

    left = ({"pq_1", "pq_2", "pq_3"} - {h["task_id"] for h in handed}).pop()
    first, taken, done = anyio.run(two, ("--task", left), ("--task", left), same_task)
    assert first["task_id"] == left
    assert taken == {"done": False, "message": "no task is free: the 1 not answered yet is handed out to other "
                                               "agents; call next_task again later"}
    assert done["done"] is True
    assert sorted(r["task_id"] for r in lines(out / "answers.jsonl")) == ["pq_1", "pq_2", "pq_3"]



def test_four_agents_over_http_share_one_server_each_with_its_own_tasks(tmp_path):
    bundle, out = tiny_bundle(tmp_path, n=8), tmp_path / "run"
    proc, port = serve_http(bundle, out)
    try:

        names, holding = ["a1", "a2", "a3", "a4"], []

        async def agent(name: str) -> list[str]:
            mine = []
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write), \
                    ClientSession(read, write) as s:
                await s.initialize()
                await anyio.sleep(0.2 * int(name[1:]))  # while another agent's task is open: never recorded there
                assert not (await s.call_tool("get_all_models", {})).is_error
                while True:
                    handed = json.loads(text_of(await s.call_tool("next_task", {})))
                    if handed.get("done"):
                        return mine
                    if "task_id" not in handed:  # the last tasks are with the other agents
                        await anyio.sleep(0.1)
                        continue
                    mine.append(handed["task_id"])
                    if len(mine) == 1:  # each holds its first task until all four hold one: four sessions at once
                        holding.append(name)
                        while len(holding) < len(names):
                            await anyio.sleep(0.05)
                    sql = f"SELECT '{name}' AS agent, count(*) AS n FROM shop.orders"
                    assert not (await s.call_tool("execute_sql", {"sql": sql})).is_error
                    assert not (await s.call_tool("search_kb", {"query": "refunds"})).is_error
                    reply = await s.call_tool("submit_answer", {"task_id": handed["task_id"], "answer": name})
                    assert not reply.is_error, text_of(reply)

        got = anyio.run(lambda: gather(*[lambda n=n: agent(n) for n in names]))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    every = [t for tasks in got for t in tasks]
    assert sorted(every) == [f"pq_{i}" for i in range(1, 9)], got  # each task handed out once, to one agent
    records = {r["task_id"]: r for r in lines(out / "answers.jsonl")}
    assert len(records) == 8
    for name, tasks in zip(names, got, strict=True):
        for task_id in tasks:
            assert records[task_id]["answer"] == name
            transcript = json.loads((out / records[task_id]["transcript"]).read_text(encoding="utf-8"))
            calls = transcript["calls"]
            assert [c["tool"] for c in calls] == ["next_task", "execute_sql", "search_kb", "submit_answer"]
            assert calls[1]["reply"] == f"agent | n\n{name} | 10\n(1 row)", calls[1]
    # outside every attempt: each agent's first call, and the next_task calls that found nothing free or left
    outside = lines(out / "transcripts" / "outside-tasks.jsonl")
    assert {c["tool"] for c in outside} == {"next_task", "get_all_models"}
    assert sum('"done": true' in c["reply"] for c in outside) == 4
    assert sum(c["tool"] == "get_all_models" for c in outside) == 4
    holders = {e["holder"] for e in lines(out / "transcripts" / "attempts.jsonl") if e["event"] == "claim"}
    assert len(holders) == 4 and all(h.startswith("http:") for h in holders), holders  # one per MCP session


def test_oversized_arguments_are_kept_by_digest_and_calls_stay_fast(tmp_path):
    bundle, out = tiny_bundle(tmp_path), tmp_path / "run"
    big = "SELECT 1 AS x -- " + "x" * 5_000_000

    async def session():
        times = []
        async with stdio_client(serve_params(bundle, out)) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            handed = json.loads(text_of(await s.call_tool("next_task", {})))
            for _ in range(16):
                start = time.monotonic()
                result = await s.call_tool("execute_sql", {"sql": big})
                times.append(time.monotonic() - start)
                assert result.is_error and "characters, at most" in text_of(result)
            log_size = (out / "transcripts" / "pq_1-1.calls.jsonl").stat().st_size
            await s.call_tool("submit_answer", {"task_id": handed["task_id"], "answer": 1})
        return times, log_size

    times, log_size = anyio.run(session)
    assert log_size < 16 * 1024, log_size  # 16 calls of 5 MB each: a few hundred bytes a call
    first, last = sorted(times[:4])[1], sorted(times[-4:])[1]
    assert last <= 2 * first + 0.25, times  # nothing grows with the calls made
    transcript = (out / "transcripts" / "pq_1-1.json").read_text(encoding="utf-8")
    assert len(transcript) < 32 * 1024
    calls = json.loads(transcript)["calls"]
    kept = [c["arguments"]["sql"] for c in calls if c["tool"] == "execute_sql"]
    assert len(kept) == 16 and kept[0] == {"oversized": {"chars": len(big),
                                                         "sha256": hashlib.sha256(big.encode()).hexdigest()}}
    assert len(json.dumps(kept[0])) < OVERSIZED


# ---------------------------------------------------------------------------------------------------
# raw bytes on a server's stdin: what the SDK's client never sends


class RawServer:
    """`dptool serve` over stdio, spoken to line by line."""

    def __init__(self, bundle: Path, out: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "dptool.cli", "serve", str(bundle), "--out", str(out)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")})
        self.buffer = b""
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "raw", "version": "1"}}})
        assert self.reply(60)["id"] == 0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict | str) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float) -> dict | None:
        end = time.monotonic() + timeout
        while b"\n" not in self.buffer and time.monotonic() < end:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.1)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
                if not chunk:
                    break
                self.buffer += chunk
        if b"\n" not in self.buffer:
            return None
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def call(self, request_id: int, tool: str, arguments: dict) -> str:
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                           "params": {"name": tool, "arguments": arguments}})

    def close(self) -> tuple[int, str]:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.returncode, self.proc.stderr.read().decode()


def test_requests_the_sdk_cannot_read_get_a_reply_over_stdio(tmp_path):
    server = RawServer(tiny_bundle(tmp_path), tmp_path / "run")
    try:
        deep = "[" * 5000 + "]" * 5000
        cases = [
            (1, server.call(1, "execute_sql", {"sql": "SELECT 1"}).replace("SELECT 1", "\\ud800"),
             "lone surrogate"),
            (2, '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": [1, 2]}', "must be a JSON object"),
            (3, server.call(3, "submit_answer", {"task_id": "pq_1", "answer": "DEEP"}).replace('"DEEP"', deep),
             "nests deeper than 64"),
            (4, server.call(4, "submit_answer", {"task_id": "pq_1", "answer": {"value": "\ud83d 52"}}),
             "lone surrogate"),
        ]
        for request_id, line, words in cases:
            start = time.monotonic()
            server.send(line)
            reply = server.reply(10)
            assert reply is not None, f"no reply to request {request_id}"
            assert time.monotonic() - start < 5
            assert reply["id"] == request_id and words in reply["error"]["message"], reply
        server.send(server.call(5, "execute_sql", {"sql": "SELECT 41 + 1 AS x"}))
        after = server.reply(10)
        assert after["result"]["content"][0]["text"] == "x\n42\n(1 row)"  # the server is unharmed
    finally:
        code, stderr = server.close()
    assert code == 0, stderr
    outside = lines(tmp_path / "run" / "transcripts" / "outside-tasks.jsonl")
    assert [c["error"] for c in outside] == [True] * 4 + [False]


def test_a_bundle_replaced_under_a_running_server_stops_it_in_one_line(tmp_path):
    bundle = tiny_bundle(tmp_path)
    for replaced in ("tasks.jsonl", "warehouse.duckdb"):
        out = tmp_path / f"run-{replaced}"
        server = RawServer(bundle, out)
        try:
            server.send(server.call(1, "next_task", {}))
            assert "pq_1" in server.reply(10)["result"]["content"][0]["text"]
            path = bundle / replaced
            fresh = path.with_name(path.name + ".new")
            fresh.write_bytes(path.read_bytes() + (b"\n" if replaced == "tasks.jsonl" else b""))
            os.replace(fresh, path)  # as a new `dptool generate` publishes it: a new file in its place
            server.send(server.call(2, "execute_sql", {"sql": "SELECT 1 AS x"}))
            reply = server.reply(10)["result"]
            text = reply["content"][0]["text"]
            assert reply["isError"] and text == (f"error: the bundle's {replaced} changed on disk while this server "
                                                 "ran; the server stops: start it again (on a new --out for a new "
                                                 "bundle)")
            assert str(tmp_path) not in text
            server.proc.wait(15)  # it stops by itself
        finally:
            code, stderr = server.close()
        assert code == 1, stderr
        last = stderr.strip().splitlines()[-1]
        assert last.startswith(f"error: {bundle}: the bundle's {replaced} changed on disk") and "Traceback" not in \
            stderr, stderr
        transcript = lines(out / "transcripts" / "pq_1-1.calls.jsonl")
        assert [c["tool"] for c in transcript] == ["next_task", "execute_sql"]


def test_a_bundle_replaced_under_an_http_server_stops_it_in_one_line(tmp_path):
    bundle = tiny_bundle(tmp_path)
    proc, port = serve_http(bundle, tmp_path / "run")
    try:

        async def session():
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write), \
                    ClientSession(read, write) as s:
                await s.initialize()
                await s.call_tool("next_task", {})
                (bundle / "tasks.jsonl").write_text("{}\n", encoding="utf-8")
                return await s.call_tool("execute_sql", {"sql": "SELECT 1 AS x"})

        result = anyio.run(session)
        assert result.is_error and text_of(result).startswith("error: the bundle's tasks.jsonl changed on disk")
        _, stderr = proc.communicate(timeout=30)  # it stops by itself
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1 and stderr.strip().splitlines()[-1].startswith(f"error: {bundle}: the bundle's "
                                                                                "tasks.jsonl changed"), stderr


def test_a_ledger_line_cut_by_a_kill_is_no_event_and_the_run_goes_on(tmp_path):
    bundle, out = tiny_bundle(tmp_path), tmp_path / "run"
    tasks = load_tasks(bundle)
    with Environment(bundle) as env:
        run = ServedRun(env, tasks, out)
        first = json.loads(run.call("next_task", {}).text)
        assert not run.call("submit_answer", {"task_id": first["task_id"], "answer": 1}).error
        ledger = out / "transcripts" / "attempts.jsonl"
        with open(ledger, "ab") as f:
            f.write(b'{"event": "claim", "id": "cut", "task_id": "pq_2", "att')  # a server killed mid-line
        run = ServedRun(env, tasks, out)  # a server started again
        second = json.loads(run.call("next_task", {}).text)
        assert second["task_id"] == "pq_2" and "note" not in second
        assert not run.call("submit_answer", {"task_id": "pq_2", "answer": 2, "attempt_id": second["attempt_id"]}).error
        run.close()
    events = ledger.read_text(encoding="utf-8").splitlines()
    assert events[2].startswith('{"event": "claim", "id": "cut"') and all(json.loads(e) for e in events[3:])
    assert [e["event"] for e in map(json.loads, events[:2] + events[3:])] == ["claim", "answer", "claim", "answer"]
    assert sorted(r["task_id"] for r in lines(out / "answers.jsonl")) == ["pq_1", "pq_2"]
    mask = os.umask(0o022)
    os.umask(mask)
    for name in ("run.json", "answers.jsonl", "transcripts/pq_1-1.json", "transcripts/attempts.jsonl"):
        assert (out / name).stat().st_mode & 0o777 == 0o666 & ~mask, name  # the user's umask, never private


def test_the_next_task_prompt_hands_out_an_attempt_with_its_handle(tmp_path):
    bundle, out = tiny_bundle(tmp_path), tmp_path / "run"

    async def session():
        async with stdio_client(serve_params(bundle, out)) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            prompt = await s.get_prompt("next_task")
            text = prompt.messages[0].content.text
            handle = re.search(r'attempt_id="([0-9a-f]{10})"', text).group(1)
            reply = await s.call_tool("submit_answer", {"task_id": "pq_1", "answer": 1, "attempt_id": handle})
            return text, handle, reply

    text, handle, reply = anyio.run(session)
    assert "Task pq_1 (attempt 1 of 1)" in text and "What was revenue number 1?" in text
    assert not reply.is_error, text_of(reply)
    transcript = json.loads((out / "transcripts" / "pq_1-1.json").read_text(encoding="utf-8"))
    assert transcript["attempt_id"] == handle and [c["tool"] for c in transcript["calls"]] == ["next_task",
                                                                                              "submit_answer"]


def test_open_attempts_past_the_bound_share_environments_and_every_call_still_lands(tmp_path):
    bundle, out = tiny_bundle(tmp_path, n=3), tmp_path / "run"
    with Environment(bundle) as env:
        run = ServedRun(env, load_tasks(bundle), out, max_environments=2)
        callers = ["http:a", "http:b", "http:c"]  # three MCP sessions, each with its task open at once
        handed = {c: json.loads(run.call("next_task", {}, c).text) for c in callers}
        for round_ in range(2):
            for c in callers:
                reply = run.call("execute_sql", {"sql": f"SELECT '{c}' AS who, {round_} AS r"}, c)
                assert reply.text == f"who | r\n{c} | {round_}\n(1 row)", reply.text
        assert run.pool.live == 2
        for c in callers:
            assert not run.call("submit_answer", {"task_id": handed[c]["task_id"], "answer": c}, c).error
        run.close()
    for c in callers:
        transcript = json.loads((out / "transcripts" / f"{handed[c]['task_id']}-1.json").read_text(encoding="utf-8"))
        assert [call["arguments"]["sql"] for call in transcript["calls"] if call["tool"] == "execute_sql"] == [
            f"SELECT '{c}' AS who, {r} AS r" for r in range(2)]


def test_an_answer_holding_nan_is_refused_and_the_answers_file_stays_json(tmp_path):
    # Python's json (the SDK's) reads a bare NaN; the SDK's client never sends one, a client of another language may
    server = RawServer(tiny_bundle(tmp_path), tmp_path / "run")
    try:
        server.send(server.call(1, "next_task", {}))
        handle = json.loads(server.reply(10)["result"]["content"][0]["text"])["attempt_id"]
        server.send(server.call(2, "submit_answer", {"task_id": "pq_1", "answer": {"value": "NAN"},
                                                     "attempt_id": handle}).replace('"NAN"', "NaN"))
        nan = server.reply(10)["result"]
        server.send(server.call(3, "submit_answer", {"task_id": "pq_1", "answer": {"value": 62.25},
                                                     "attempt_id": handle}))
        right = server.reply(10)["result"]
    finally:
        server.close()
    assert nan["isError"] and "NaN or Infinity" in nan["content"][0]["text"], nan
    assert not right["isError"], right
    answer, = lines(tmp_path / "run" / "answers.jsonl")  # every line JSON: no bare NaN in it
    assert answer["answer"] == {"value": 62.25}
