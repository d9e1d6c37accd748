"""`dptool serve` (issue 25): the benchmark's environment as an MCP server, driven by the mcp SDK's own client.

A full session over stdio takes 20 tasks of the demo bundle one by one, runs real SQL through execute_sql, submits
the gold-sql reference agent's answers, and `dptool score` gives 100 %; base-sql's answers give 0 % on the rule
tier. Every reply of the session is read for what no reply may hold: a task's gold, base, SQL, rule scope,
tolerance, spec or dbt node. The task flow itself (ServedRun) is tested on a bundle of two tasks made here.
"""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import anyio
import duckdb
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from dptool.bundle import fingerprint
from dptool.errors import DptoolError
from dptool.evaluate.environment import Environment, Limits
from dptool.evaluate.reference import reference_records
from dptool.evaluate.run_folder import answered
from dptool.evaluate.score import load_tasks
from dptool.evaluate.select import Selection
from dptool.evaluate.served_run import ServedRun
from tests.conftest import run_cli
from tests.served import RULE_TIER, serve_http, serve_params, text_of
from tests.served import tiny_bundle as make_tiny_bundle

ENV_TOOLS = {"execute_sql", "get_all_models", "get_model_details", "list_metrics", "search_kb", "get_kb_document"}
FLOW_TOOLS = {"next_task", "submit_answer"}
HANDED_OUT = {"task_id", "attempt", "attempt_id", "epochs", "question", "answer_format", "remaining", "note"}
SECRET_KEYS = ("gold_sql", "base_sql", "rule_ids", "rules_in_force", "rule_scope", "withdrawn_rule", "tolerance",
               "dbt_node", '"spec"', '"gold"', '"base"')
SAMPLE = 20
HOSTILE_SQL = [
    "COPY (SELECT 1) TO '/tmp/dptool_serve_pwned.csv'",
    "SELECT * FROM read_csv_auto('/etc/passwd')",
    "SELECT * FROM 'tasks.jsonl'",
    "ATTACH '/tmp/dptool_serve_other.duckdb' AS other",
    "SELECT 1; DROP TABLE ecommerce.orders",
    "INSTALL httpfs",
    "SET enable_external_access = true",
    "SELECT getenv('HOME')",
    "WITH x AS (SELECT 1) DELETE FROM ecommerce.orders",
    "CREATE TABLE ecommerce.pwned AS SELECT 1 AS x",
    "PRAGMA database_list",
    "SELECT * FROM query('SELECT 1')",
]


# ---------------------------------------------------------------------------------------------------
# what may never appear in a reply


def _leaves(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _number_forms(x: float) -> set[str]:
    return {repr(x), f"{x:g}", f"{x:.2f}", f"{x:.4f}".rstrip("0").rstrip(".")}


def secrets_of(task: dict) -> list[str]:
    """Texts of a task no reply of the server may carry, whatever the tool: its SQL, node, spec and answers."""
    out = [task.get("gold_sql"), task.get("base_sql"), task.get("dbt_node"), *(task.get("spec") or {}).get("where", ())]
    out += [json.dumps(task[k], ensure_ascii=False) for k in ("gold", "base", "spec", "tolerance") if task.get(k)]
    return [s for s in out if s]


def flow_secrets(task: dict, hint: str, numbers: bool = True) -> list[re.Pattern]:
    """What the task flow's replies (next_task, submit_answer) may not carry either: the key names of the hidden
    fields, the task's rule ids, and every value of its gold and base that its question and answer format do not
    already say (numbers as they are written: 2.08, 2.080, 2.0800; not in the server's fixed texts, which say
    "100 rows")."""
    shown = f"{task['question']}\n{hint}"
    words = list(SECRET_KEYS) + [r for r in [*(task.get("rule_ids") or ()), *(task.get("rules_in_force") or ()),
                                             task.get("withdrawn_rule")] if r]
    for leaf in _leaves([task.get("gold"), task.get("base")]):
        if isinstance(leaf, bool) or leaf is None:
            continue
        if isinstance(leaf, str) and re.fullmatch(r"-?\d+(\.\d+)?", leaf):  # a knowledge fact "100" is a number
            leaf = float(leaf)
        if isinstance(leaf, int | float):
            if numbers and (isinstance(leaf, float) and leaf != int(leaf) or abs(leaf) >= 100):
                words += [f for f in _number_forms(float(leaf)) | {str(leaf)} if f not in shown]
        elif isinstance(leaf, str) and len(leaf) >= 3 and leaf.casefold() not in shown.casefold():
            words.append(leaf)
    return [re.compile(rf"(?<![\w.]){re.escape(w)}(?![\w])") for w in words]


# ---------------------------------------------------------------------------------------------------
# one session of an agent, as the mcp SDK's client drives it


async def drive(params: StdioServerParameters, answers: dict[str, object], *, stop_after: int | None = None,
                probe: bool = True) -> dict:
    """Take tasks one by one until the server says it is done (or `stop_after` tasks): for each, query the
    warehouse, call the task-free tools, and submit `answers[task_id]`. Every reply is kept."""
    log = {"tools": [], "replies": [], "open": [], "handed": [], "independent": {}, "sql": []}

    async def call(session, name, arguments):
        result = await session.call_tool(name, arguments)
        log["replies"].append((name, arguments, text_of(result), result.is_error))
        if name == "next_task":  # the task open at each reply (none once the run is done)
            log["open"].append(json.loads(text_of(result)).get("task_id"))
        else:
            log["open"].append(log["open"][-1] if log["open"] else None)
        return result

    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        log["instructions"] = init.instructions or ""
        listed = await session.list_tools()
        log["tools"] = [(t.name, t.description, json.dumps(t.input_schema)) for t in listed.tools]
        tables = None
        while stop_after is None or len(log["handed"]) < stop_after:
            result = await call(session, "next_task", {})
            assert not result.is_error, text_of(result)
            handed = json.loads(text_of(result))
            if handed.get("done"):
                log["done"] = handed
                break
            log["handed"].append(handed)
            if probe:
                if tables is None:
                    log["tables"] = text_of(await call(session, "get_all_models", {}))
                    tables = re.findall(r"^- ([\w.]+)\(", log["tables"], flags=re.MULTILINE)
                table = tables[len(log["handed"]) % len(tables)]  # a table after another, task by task
                sql = f"SELECT count(*) AS n FROM {table}"
                result = await call(session, "execute_sql", {"sql": sql})
                log["sql"].append((sql, text_of(result), result.is_error))
                for name, arguments in (("get_all_models", {}), ("list_metrics", {}),
                                        ("search_kb", {"query": "policy excluded"}),
                                        ("get_model_details", {"name": table.split(".")[1]})):
                    reply = text_of(await call(session, name, arguments))
                    log["independent"].setdefault((name, json.dumps(arguments)), {})[handed["task_id"]] = reply
            result = await call(session, "submit_answer", {"task_id": handed["task_id"],
                                                           "answer": answers[handed["task_id"]]})
            assert not result.is_error, text_of(result)
    return log


@pytest.fixture(scope="module")
def bundle(demo_bundle) -> Path:
    return demo_bundle[0]


@pytest.fixture(scope="module")
def selected(bundle) -> list[dict]:
    return Selection(sample=SAMPLE).apply(load_tasks(bundle))


@pytest.fixture(scope="module")
def reference(bundle, selected) -> dict[str, dict[str, object]]:
    records = reference_records(bundle, ("gold-sql", "base-sql"), selected)
    return {agent: {r["task_id"]: r["answer"] for r in rs} for agent, rs in records.items()}


@pytest.fixture(scope="module")
def gold_session(bundle, reference, tmp_path_factory):
    out = tmp_path_factory.mktemp("serve") / "gold-run"
    log = anyio.run(lambda: drive(serve_params(bundle, out, "--sample", str(SAMPLE)), reference["gold-sql"]))
    return out, log


def test_a_full_session_of_gold_sql_answers_scores_100_percent(bundle, selected, gold_session, tmp_path):
    out, log = gold_session
    assert {name for name, _, _ in log["tools"]} == ENV_TOOLS | FLOW_TOOLS
    assert [h["task_id"] for h in log["handed"]] == [t["task_id"] for t in selected]  # one by one, in bundle order
    assert [h["remaining"] for h in log["handed"]] == list(range(SAMPLE, 0, -1))
    assert log["done"]["done"] is True
    proc = run_cli("score", str(bundle), str(out), "--sample", str(SAMPLE), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    assert f"\naccuracy 100.0 %: {SAMPLE} of {SAMPLE} tasks correct" in proc.stdout, proc.stdout
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["bundle"] == fingerprint(bundle) and run["source"] == "serve" and run["epochs"] == 1
    assert run["selection"] == Selection(sample=SAMPLE).as_dict()


def test_execute_sql_runs_real_sql_on_the_warehouse(bundle, gold_session):
    _, log = gold_session
    assert len(log["sql"]) == SAMPLE
    with duckdb.connect(str(bundle / "warehouse.duckdb"), read_only=True) as con:
        for sql, reply, error in log["sql"]:
            (n,), = con.execute(sql).fetchall()
            assert not error and reply == f"n\n{n}\n(1 row)", (sql, reply)
    assert not any(name.split(".")[1].startswith("dptool") or "gold" in name
                   for name in re.findall(r"^- ([\w.]+)\(", log["tables"], flags=re.MULTILINE))


def test_every_call_is_recorded_per_attempt_in_the_run_folder(bundle, selected, gold_session):
    out, log = gold_session
    lines = [json.loads(line) for line in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["task_id"], r["attempt"]) for r in lines] == [(t["task_id"], 1) for t in selected]
    assert {r["bundle"] for r in lines} == {fingerprint(bundle)}
    for record in lines:
        assert record["tool_calls"] == (6 if record is lines[0] else 5)
        assert record["sql_errors"] == 0 and record["seconds"] >= 0
        transcript = json.loads((out / record["transcript"]).read_text(encoding="utf-8"))
        assert [c["tool"] for c in transcript["calls"]] == (
            ["next_task", *(["get_all_models"] if record is lines[0] else []), "execute_sql", "get_all_models",
             "list_metrics", "search_kb", "get_model_details", "submit_answer"])
        sql = next(c for c in transcript["calls"] if c["tool"] == "execute_sql")
        assert sql["arguments"]["sql"].startswith("SELECT count(*)") and sql["reply_chars"] == len(sql["reply"])
        assert transcript["answer"] == record["answer"] and transcript["attempt"] == 1


def test_no_reply_of_a_session_reveals_a_task_s_answer_sql_or_rule_scope(selected, gold_session):
    _, log = gold_session
    static = log["instructions"] + "\n".join(d + s for _, d, s in log["tools"])
    every = [static] + [text for _, _, text, _ in log["replies"]]
    for task in selected:
        for secret in secrets_of(task):
            leaks = [text[:200] for text in every if secret in text]
            assert not leaks, (task["task_id"], secret[:80], leaks[:1])
    # the task flow's replies carry a task's id, question and answer format, nothing else: read each against the
    # task open when it was made (another task's question may name a group this task's answer holds)
    for handed in log["handed"]:
        assert set(handed) <= HANDED_OUT, set(handed) - HANDED_OUT
    for task in selected:
        hint = next(h["answer_format"] for h in log["handed"] if h["task_id"] == task["task_id"])
        flow = [(name, text) for (name, _, text, _), opened in zip(log["replies"], log["open"], strict=True)
                if name in FLOW_TOOLS and opened == task["task_id"]]
        assert [name for name, _ in flow] == ["next_task", "submit_answer"]
        for name, text in flow + [("static", static)]:
            found = [p.pattern for p in flow_secrets(task, hint, numbers=name != "static") if p.search(text)]
            assert not found, (task["task_id"], name, found, text[:300])
    # and no other tool's reply depends on which task is open, but for its domain: the kb tools read the open
    # task's domain's knowledge base (issue 26), the warehouse tools read the same tables whatever the task
    domain_of = {t["task_id"]: t["domain"] for t in selected}
    for (name, arguments), replies in log["independent"].items():
        by_domain: dict[str, set[str]] = {}
        for task_id, reply in replies.items():
            by_domain.setdefault(domain_of[task_id], set()).add(reply)
        assert all(len(r) == 1 for r in by_domain.values()), (name, arguments)
        if name in ("get_all_models", "get_model_details"):
            assert len(set(replies.values())) == 1, (name, arguments)
    assert sum(1 for key in log["independent"] if key[0] == "get_model_details") > 1


def test_base_sql_answers_score_0_percent_on_the_rule_tier_and_a_restarted_server_resumes(
        bundle, selected, reference, tmp_path):
    out = tmp_path / "base-run"
    params = serve_params(bundle, out, "--sample", str(SAMPLE), "--model", "base-sql")
    first = anyio.run(lambda: drive(params, reference["base-sql"], stop_after=5, probe=False))
    # the client went away after 5 answers; a second server on the same folder hands out the 6th task next
    rest = anyio.run(lambda: drive(params, reference["base-sql"], probe=False))
    ids = [t["task_id"] for t in selected]
    assert [h["task_id"] for h in first["handed"]] == ids[:5]
    assert [h["task_id"] for h in rest["handed"]] == ids[5:]
    assert answered(out / "answers.jsonl") == {(i, 1) for i in ids}
    proc = run_cli("score", str(bundle), str(out), "--sample", str(SAMPLE), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "score" / "score.json").read_text(encoding="utf-8"))
    rule_tier = report["by_tier"][RULE_TIER]
    assert rule_tier["n"] > 0 and rule_tier["correct"] == 0, rule_tier
    # and every one of those misses is a failure the benchmark exists to find: the rules not applied, or on a
    # counterfactual (whose base applies every rule) the withdrawn rule still applied
    classes = {r["task_id"]: r["failure"] for r in report["results"] if r["tier"] == RULE_TIER}
    kinds = {t["task_id"]: t["analysis_type"] for t in selected}
    assert {c for i, c in classes.items() if kinds[i] != "counterfactual"} == {"rules not applied"}
    assert {c for i, c in classes.items() if kinds[i] == "counterfactual"} <= {"withdrawn rule still applied"}
    # another setting on the same folder is refused in one line, nothing touched
    before = (out / "answers.jsonl").read_bytes()
    proc = run_cli("serve", str(bundle), "--out", str(out), "--sample", str(SAMPLE), "--max-rows", "7")
    assert proc.returncode == 1 and proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "max_rows = 100, not 7" in proc.stderr and (out / "answers.jsonl").read_bytes() == before


def test_hostile_sql_and_kb_paths_are_refused_in_one_line(bundle, tmp_path):
    async def session():
        replies = []
        async with stdio_client(serve_params(bundle, tmp_path / "run", "--sample", "1")) as (read, write), \
                ClientSession(read, write) as s:
            await s.initialize()
            await s.call_tool("next_task", {})
            for sql in HOSTILE_SQL:
                replies.append(("execute_sql", sql, await s.call_tool("execute_sql", {"sql": sql})))
            for path in ("../tasks.jsonl", "/etc/passwd", "rules/../../bundle.json", "kb/../tasks.jsonl", "..",
                         "~/.ssh/id_rsa"):
                replies.append(("get_kb_document", path, await s.call_tool("get_kb_document", {"path": path})))
            replies.append(("execute_sql", 5, await s.call_tool("execute_sql", {"sql": 5})))
            replies.append(("nope", None, await s.call_tool("nope", {})))
            after = await s.call_tool("execute_sql", {"sql": "SELECT count(*) AS n FROM ecommerce.orders"})
        return replies, after

    replies, after = anyio.run(session)
    for tool, given, result in replies:
        text = text_of(result)
        assert result.is_error and text.startswith("error: ") and "\n" not in text, (tool, given, text)
    assert not Path("/tmp/dptool_serve_pwned.csv").exists() and not Path("/tmp/dptool_serve_other.duckdb").exists()
    assert not after.is_error and text_of(after).startswith("n\n")  # the server and its warehouse are unharmed
    log, = (tmp_path / "run" / "transcripts").glob("*.calls.jsonl")  # the open attempt's calls, appended one by one
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(calls) == 1 + len(replies) + 1  # every call, the ones the SDK refused too
    assert [c["tool"] for c in calls][-3:] == ["execute_sql", "nope", "execute_sql"]
    assert sum(1 for c in calls if c["tool"] == "execute_sql" and c["error"]) == len(HOSTILE_SQL) + 1



def test_streamable_http_on_loopback(bundle, tmp_path):
    out = tmp_path / "http-run"
    proc, port = serve_http(bundle, out, "--sample", "2")
    try:

        async def session():
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write), \
                    ClientSession(read, write) as s:
                await s.initialize()
                return await s.call_tool("execute_sql", {"sql": "SELECT 40 + 2 AS answer"})

        result = anyio.run(session)
        assert not result.is_error and text_of(result) == "answer\n42\n(1 row)"
    finally:
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    assert f"MCP over http://127.0.0.1:{port}/mcp" in stderr and "dptool serve: stopped; 0 of 2" in stderr, stderr
    outside = [json.loads(line) for line in (out / "transcripts" / "outside-tasks.jsonl").read_text().splitlines()]
    assert [(c["tool"], c["reply"]) for c in outside] == [("execute_sql", "answer\n42\n(1 row)")]


# ---------------------------------------------------------------------------------------------------
# the task flow, on a bundle of two tasks made here (no MCP, no demo)


@pytest.fixture
def tiny_bundle(tmp_path) -> Path:
    return make_tiny_bundle(tmp_path)


def _handed(run: ServedRun) -> dict:
    return json.loads(run.call("next_task", {}).text)


def test_tasks_are_handed_out_attempt_by_attempt_and_a_restart_resumes(tiny_bundle, tmp_path):
    out = tmp_path / "run"
    tasks = load_tasks(tiny_bundle)
    with Environment(tiny_bundle) as env:
        run = ServedRun(env, tasks, out, epochs=2)
        first = _handed(run)
        assert (first["task_id"], first["attempt"], first["remaining"]) == ("pq_1", 1, 4)
        again = _handed(run)  # still open: the same task, with a note
        assert again["task_id"] == "pq_1" and "still open" in again["note"]
        wrong = run.call("submit_answer", {"task_id": "pq_2", "answer": {"value": 1}})
        assert wrong.error and "not the open task (pq_1)" in wrong.text
        assert not run.call("submit_answer", {"task_id": "pq_1", "answer": {"value": 62.25}}).error
        second = run.call("submit_answer", {"task_id": "pq_1", "answer": 1}).text  # answered once, never twice
        assert re.fullmatch(rf"error: the answer to pq_1 \(attempt 1\) was already recorded at [\d-]+ [\d:]+ UTC "
                            rf"\(attempt_id {first['attempt_id']}\); this one is not recorded", second), second
        assert _handed(run)["task_id"] == "pq_2"
    with Environment(tiny_bundle) as env:  # a new server: pq_2's attempt 1 was handed out, never answered
        run = ServedRun(env, tasks, out, epochs=2)
        order, notes = [], []
        while not (handed := _handed(run)).get("done"):
            order.append((handed["task_id"], handed["attempt"]))
            notes.append("note" in handed)
            run.call("submit_answer", {"task_id": handed["task_id"], "answer": "62.25"})
        assert order == [("pq_2", 1), ("pq_1", 2), ("pq_2", 2)]
        assert notes == [True, False, False]  # the open attempt goes on, as open
    kept = json.loads((out / "transcripts" / "pq_2-1.json").read_text(encoding="utf-8"))
    assert [c["tool"] for c in kept["calls"]] == ["next_task", "next_task", "submit_answer"]  # the first server's too
    assert kept["finished"] is True
    assert answered(out / "answers.jsonl") == {("pq_1", 1), ("pq_2", 1), ("pq_1", 2), ("pq_2", 2)}
    assert sorted(p.name for p in (out / "transcripts").glob("*.json")) == ["pq_1-1.json", "pq_1-2.json",
                                                                           "pq_2-1.json", "pq_2-2.json"]
    # the restart's done reply and the first server's calls after its submit went outside every attempt
    outside = (out / "transcripts" / "outside-tasks.jsonl").read_text(encoding="utf-8")
    assert '"tool": "submit_answer"' in outside and '"done": true' in outside.replace('\\"', '"')


def test_one_attempt_across_a_server_per_call(tiny_bundle, tmp_path):
    # LangChain's MultiServerMCPClient over stdio starts a server for every tool call
    tasks, out = load_tasks(tiny_bundle), tmp_path / "run"
    for tool, arguments in [("next_task", {}), ("execute_sql", {"sql": "select count(*) as n from shop.orders"}),
                            ("submit_answer", {"task_id": "pq_1", "answer": {"value": 62.25}})]:
        with Environment(tiny_bundle) as env:
            reply = ServedRun(env, tasks, out).call(tool, arguments)
            assert not reply.error, reply.text
    record, = [json.loads(line) for line in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert (record["task_id"], record["attempt"], record["tool_calls"], record["answer"]) == ("pq_1", 1, 1,
                                                                                            {"value": 62.25})
    transcript = json.loads((out / record["transcript"]).read_text(encoding="utf-8"))
    assert [c["tool"] for c in transcript["calls"]] == ["next_task", "execute_sql", "submit_answer"]
    assert transcript["calls"][1]["reply"] == "n\n10\n(1 row)"
    assert not (out / "transcripts" / "outside-tasks.jsonl").exists()


def test_a_served_run_refuses_other_settings_and_a_folder_it_did_not_write(tiny_bundle, tmp_path):
    tasks = load_tasks(tiny_bundle)
    with Environment(tiny_bundle) as env:
        ServedRun(env, tasks, tmp_path / "run", epochs=1)
        with pytest.raises(DptoolError, match=r"holds a run with epochs = 1, not 2"):
            ServedRun(env, tasks, tmp_path / "run", epochs=2)
        (tmp_path / "other").mkdir()
        (tmp_path / "other" / "answers.jsonl").write_text('{"task_id": "pq_1", "answer": 1}\n', encoding="utf-8")
        with pytest.raises(DptoolError, match="no run.json"):
            ServedRun(env, tasks, tmp_path / "other")


def test_the_environment_s_tools_on_a_small_bundle(tiny_bundle):
    with Environment(tiny_bundle, Limits(max_rows=3)) as env:
        assert env.call("get_all_models", {}).text == "- shop.orders(id INTEGER, amount DECIMAL(10,2))"
        assert env.call("get_model_details", {"name": "orders"}).text == (
            "shop.orders: 10 rows, 2 columns\ncolumn | type\nid | INTEGER\namount | DECIMAL(10,2)")
        assert env.call("execute_sql", {"sql": "select id from shop.orders order by id"}).text == (
            "id\n0\n1\n2\n(first 3 rows shown; the result has more: aggregate, filter or add LIMIT)")
        assert env.call("list_metrics", {}).text.splitlines()[:2] == ["name | domain | unit | formula",
                                                                      "Revenue | shop | USD (currency) | SUM(amount)"]
        assert env.call("list_metrics", {"search": ["REVEN"]}).text.startswith("## Revenue\n\n- Domain: shop")
        assert env.call("search_kb", {"query": "refunded orders"}).text.startswith("[rules/refunds.md")
        assert env.call("get_kb_document", {"path": "rules/refunds.md"}).text.startswith("# Refund Exclusion")
        for tool, arguments, message in [
                ("execute_sql", {"sql": "drop table shop.orders"}, "error: refused: DROP is DDL; execute_sql takes"),
                ("execute_sql", {}, "error: execute_sql needs the argument 'sql'"),
                ("search_kb", {"query": "x", "k": 0}, "error: search_kb: k must be between 1 and 20"),
                ("search_kb", {"query": "refund " * 1000}, "error: search_kb: the query is 7,000 characters, at most"),
                ("get_model_details", {"name": "tasks"}, "error: no table 'tasks'; the tables are shop.orders"),
                ("get_kb_document", {"path": "../tasks.jsonl"}, "error: no kb document '../tasks.jsonl'"),
                ("list_metrics", {"search": 3}, "error: list_metrics: 'search' must be a string or a list"),
                ("next_task", {}, "error: unknown tool 'next_task'")]:
            reply = env.call(tool, arguments)
            assert reply.error and reply.text.startswith(message), (tool, reply.text)


# ---------------------------------------------------------------------------------------------------
# one knowledge base per domain (issue 26): the bank's "Small Sample Suppression" (10 accounts) and the marketplace's
# "Small-Sample Suppression" (50 records) are no longer one search away from each other

SUPPRESSION_QUERIES = ("Small-Sample Suppression 50 records", "Small Sample Suppression minimum accounts",
                       "suppression LGPD customer statistics threshold")


def sources(reply: str) -> set[str]:
    """The document paths a search_kb reply heads its passages with."""
    return set(re.findall(r"^\[([^\]]+?) — ", reply, flags=re.MULTILINE))


def test_a_search_from_a_banking_task_never_returns_an_ecommerce_document(bundle, tmp_path):
    tasks = load_tasks(bundle)
    picked = [next(t for t in tasks if t["domain"] == d) for d in ("banking", "ecommerce")]
    docs = {d: {p.relative_to(bundle / "kb" / d).as_posix() for p in (bundle / "kb" / d).rglob("*.md")}
            for d in ("banking", "ecommerce")}

    async def session():
        seen = {}
        params = serve_params(bundle, tmp_path / "run", "--tasks", ",".join(t["task_id"] for t in picked))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            for _ in picked:
                handed = json.loads(text_of(await s.call_tool("next_task", {})))
                replies = [text_of(await s.call_tool("search_kb", {"query": q, "k": 20})) for q in SUPPRESSION_QUERIES]
                ours = await s.call_tool("get_kb_document", {"path": "rules/small_sample_suppression.md"})
                listed = text_of(await s.call_tool("list_metrics", {}))
                seen[handed["task_id"]] = (replies, ours, listed)
                await s.call_tool("submit_answer", {"task_id": handed["task_id"], "answer": "{}"})
        return seen

    seen = anyio.run(session)
    banking, ecommerce = (seen[t["task_id"]] for t in picked)
    for replies, _, _ in (banking, ecommerce):
        assert all(sources(r) for r in replies)
    found = {name: set().union(*(sources(r) for r in got[0])) for name, got in (("banking", banking),
                                                                               ("ecommerce", ecommerce))}
    assert found["banking"] <= docs["banking"] and found["ecommerce"] <= docs["ecommerce"], found
    assert "rules/small_segment_suppression.md" in found["banking"]
    assert "rules/small_sample_suppression.md" in found["ecommerce"]
    assert not any("50 records" in r for r in banking[0])
    # the marketplace's document is not the bank's to read; in a marketplace task it is
    assert banking[1].is_error and "rules/small_segment_suppression.md" in text_of(banking[1])
    assert not ecommerce[1].is_error and "50" in text_of(ecommerce[1])
    for (_, _, listed), domain in ((banking, "banking"), (ecommerce, "ecommerce")):
        rows = listed.splitlines()[1:-1]
        assert rows and {row.split(" | ")[1] for row in rows} == {domain}
