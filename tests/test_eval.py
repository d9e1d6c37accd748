"""`dptool eval` on the demo bundle against a real HTTP server on loopback that speaks Ollama's API."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from dptool.evaluate.agent import Agent, Settings, append_answer, finished, load_prompts
from dptool.evaluate.score import load_tasks
from dptool.llm.client import LLM
from tests.terminal import as_from_a_terminal

REFUSED_DROP = "error: refused: DROP is DDL; run_sql takes exactly one read-only SELECT or WITH query"


@pytest.fixture(scope="module")
def bundle(demo_bundle) -> Path:
    return demo_bundle[0]


@pytest.fixture(scope="module")
def tasks(bundle) -> list[dict]:
    return load_tasks(bundle)


def eval_args(bundle: Path, server, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "dptool.cli", "eval", str(bundle), "--model", "ollama:test-model",
            "--ollama-host", server.url, "--out", str(out), *extra]


def run_eval(bundle: Path, server, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(eval_args(bundle, server, out, *extra), capture_output=True, text=True, timeout=120)


def the_first(tasks: list[dict], n: int) -> list[str]:
    """The selection of the first n tasks of the bundle."""
    return ["--tasks", ",".join(t["task_id"] for t in tasks[:n])]


def answer_reply(value) -> dict:
    return {"content": f"Done.\n<answer>{json.dumps(value)}</answer>"}


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_loop_runs_tools_refuses_a_write_and_scores_three_tasks(bundle, tasks, ollama_server, tmp_path):
    t0, _, t2 = tasks[:3]
    ollama_server.chat_replies += [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": "select count(*) as n from ecommerce.orders"}}]},
        {"tool_calls": [{"name": "search_kb", "arguments": {"query": t0["question"]}}]},
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": "drop table ecommerce.orders"}}]},
        answer_reply(t0["gold"]),
        {"content": "<answer>I do not know</answer>"},
        {"content": "Let me think about it."},  # neither a tool call nor an answer: the agent is nudged
        answer_reply(t2["gold"]),
    ]
    out = tmp_path / "run"
    proc = run_eval(bundle, ollama_server, out, *the_first(tasks, 3))
    assert proc.returncode == 0, proc.stderr
    assert "accuracy 66.7 %: 2 of 3 tasks correct, a task without an answer counting as wrong; scored against gold" \
        in proc.stdout

    answers = lines(out / "answers.jsonl")
    assert [(a["task_id"], a["stop"], a["turns"]) for a in answers] == \
        [(t["task_id"], "answer", n) for t, n in zip(tasks[:3], (4, 1, 2), strict=True)]
    transcript = json.loads((out / "transcripts" / f"{t0['task_id']}-1.json").read_text(encoding="utf-8"))
    tool_outputs = [m["content"] for m in transcript["messages"] if m["role"] == "tool"]
    with duckdb.connect(str(bundle / "warehouse.duckdb"), read_only=True) as con:
        orders = con.execute("select count(*) from ecommerce.orders").fetchone()[0]
    assert tool_outputs[0] == f"n\n{orders}\n(1 row)"
    assert tool_outputs[1].startswith(("[metrics.md — ", "[rules/"))
    assert tool_outputs[2] == REFUSED_DROP
    assert transcript["tool_calls"] == 3 and transcript["answer"] == json.dumps(t0["gold"])
    nudged = json.loads((out / "transcripts" / f"{t2['task_id']}-1.json").read_text(encoding="utf-8"))
    assert nudged["messages"][3] == {"role": "user", "content": load_prompts()["nudge"]}

    score = json.loads((out / "score.json").read_text(encoding="utf-8"))
    assert [r["reason"] for r in score["results"]][1].startswith(("expected", "missing"))
    assert (out / "report.html").read_text(encoding="utf-8").count("<svg") == 4

    bodies = [body for path, body in ollama_server.requests if path == "/api/chat"]
    assert len(bodies) == 7
    first = bodies[0]
    assert first["options"]["temperature"] == 0
    assert [t["function"]["name"] for t in first["tools"]] == ["run_sql", "search_kb"]
    with duckdb.connect(str(bundle / "warehouse.duckdb"), read_only=True) as con:
        tables = con.execute("select distinct table_schema || '.' || table_name from information_schema.tables "
                             "where table_schema not in ('information_schema', 'pg_catalog')").fetchall()
    assert all(f"- {name}(" in first["messages"][0]["content"] for (name,) in tables)
    assert bodies[1]["messages"][-1] == {"role": "tool", "tool_name": "run_sql", "content": tool_outputs[0]}


def test_an_interrupted_run_resumes_with_the_tasks_not_yet_answered(bundle, tasks, ollama_server, tmp_path):
    t0, t1, t2 = tasks[:3]
    out = tmp_path / "run"
    ollama_server.chat_replies += [answer_reply(t0["gold"]), {"delay": 3, **answer_reply(t1["gold"])}]
    proc = subprocess.Popen(eval_args(bundle, ollama_server, out, *the_first(tasks, 3)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=as_from_a_terminal)
    deadline = time.monotonic() + 60
    while len(ollama_server.requests) < 2 and time.monotonic() < deadline:  # task 2 is waiting for its reply
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "error: interrupted after 1 of 3 tasks" in stderr and "run the same command again to resume" in stderr
    assert [a["task_id"] for a in lines(out / "answers.jsonl")] == [t0["task_id"]]

    ollama_server.requests.clear()
    ollama_server.chat_replies += [answer_reply(t1["gold"]), answer_reply(t2["gold"])]
    again = run_eval(bundle, ollama_server, out, *the_first(tasks, 3))
    assert again.returncode == 0, again.stderr
    assert "2 tasks to run, 1 already answered" in again.stdout
    assert "accuracy 100.0 %: 3 of 3 tasks correct" in again.stdout
    assert [a["task_id"] for a in lines(out / "answers.jsonl")] == [t["task_id"] for t in tasks[:3]]
    asked = [body["messages"][1]["content"] for _, body in ollama_server.requests]
    assert len(asked) == 2 and not any(t0["question"] in q for q in asked)


def test_a_resumed_run_must_keep_its_settings(bundle, tasks, ollama_server, tmp_path):
    out = tmp_path / "run"
    ollama_server.chat_replies += [answer_reply(tasks[0]["gold"])]
    assert run_eval(bundle, ollama_server, out, *the_first(tasks, 1)).returncode == 0
    other = run_eval(bundle, ollama_server, out, *the_first(tasks, 1), "--condition", "oracle")
    assert other.returncode == 1
    assert other.stderr == f"error: {out}: holds a run with condition = 'standard', not 'oracle'; rerun with the " \
                           f"same settings to resume, or choose another --out\n"


def test_no_rule_condition_hides_rule_documents_and_scores_against_base(bundle, tasks, ollama_server, tmp_path):
    # the conditions run rule tasks only; a counterfactual's base applies every rule (no-rule expects its rule_free)
    t0 = next(t for t in tasks if t["tier"] == "knowledge+analytics+rule" and t["analysis_type"] != "counterfactual")
    assert t0["gold"] != t0["base"]
    ollama_server.chat_replies += [
        {"tool_calls": [{"name": "search_kb", "arguments": {"query": t0["rule_ids"][0].replace("_", " ")}}]},
        answer_reply(t0["base"]),
    ]
    proc = run_eval(bundle, ollama_server, tmp_path / "run", *the_first([t0], 1), "--condition", "no-rule")
    assert proc.returncode == 0, proc.stderr
    assert "1 of 1 tasks correct, a task without an answer counting as wrong; scored against base" in proc.stdout
    system = ollama_server.requests[0][1]["messages"][0]["content"]
    assert "Do not apply business-rule documents" in system
    search = ollama_server.requests[1][1]["messages"][-1]["content"]
    assert "[rules/" not in search
    # `dptool score` of the run folder scores what the run ran, as it ran it: its task, against base
    again = subprocess.run([sys.executable, "-m", "dptool.cli", "score", str(bundle), str(tmp_path / "run"), "--out",
                            str(tmp_path / "score")], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert f"selection: task {t0['task_id']} (as the run ran): 1 tasks" in again.stdout
    assert "1 of 1 tasks correct, a task without an answer counting as wrong; scored against base" in again.stdout


def test_oracle_condition_gives_the_task_rule_documents(bundle, tasks):
    task = next(t for t in tasks if len(t["rule_ids"]) >= 2)
    titles = [(bundle / "kb" / task["domain"] / "rules" / f"{r}.md").read_text(encoding="utf-8").splitlines()[0]
              for r in task["rule_ids"]]
    with Agent(LLM("test-model"), bundle, Settings("ollama:test-model", condition="oracle")) as oracle:
        prompt = oracle.task_prompt(task)
    assert prompt.startswith(task["question"]) and all(title in prompt for title in titles)
    with Agent(LLM("test-model"), bundle, Settings("ollama:test-model")) as standard:
        assert not any(title in standard.task_prompt(task) for title in titles)


def test_the_last_turn_asks_for_the_answer_and_no_answer_is_recorded(bundle, tasks, ollama_server):
    query = {"tool_calls": [{"name": "search_kb", "arguments": {"query": "delivery"}}]}
    ollama_server.chat_replies += [query, query]
    llm = LLM("test-model", host=ollama_server.url)
    with Agent(llm, bundle, Settings(llm.name, max_turns=2)) as agent:
        transcript = agent.solve(tasks[0])
    assert (transcript["stop"], transcript["turns"], transcript["answer"]) == ("max_turns", 2, None)
    assert ollama_server.requests[1][1]["messages"][-1] == {"role": "user", "content": load_prompts()["last_turn"]}


def test_a_line_cut_by_an_interruption_does_not_count_and_the_next_answer_starts_a_new_line(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text('{"task_id": "t_0001", "answer": 1}\n{"task_id": "t_00', encoding="utf-8")
    assert finished(path) == {"t_0001"}
    append_answer(path, {"task_id": "t_0002", "answer": 2})
    assert finished(path) == {"t_0001", "t_0002"}
    assert path.read_text(encoding="utf-8").splitlines()[-1] == '{"answer": 2, "task_id": "t_0002"}'


def test_a_bad_model_or_an_unreachable_ollama_is_one_error_line(bundle, ollama_server, tmp_path):
    server = ollama_server
    base = [sys.executable, "-m", "dptool.cli", "eval", str(bundle), "--out", str(tmp_path / "run"), "--limit", "1"]
    bad = subprocess.run([*base, "--model", "gpt-4"], capture_output=True, text=True, timeout=60)
    assert (bad.returncode, bad.stderr) == (1, "error: --model 'gpt-4': expected ollama:NAME or openai:MODEL, e.g. "
                                               "ollama:qwen2.5:7b\n")
    down = subprocess.run([*base, "--model", "ollama:m", "--ollama-host", "http://127.0.0.1:9"], capture_output=True,
                          text=True, timeout=60)
    assert down.returncode == 1
    # before any work: no run folder, no "tasks to run" (issue 28: it used to write both first)
    assert down.stderr == "error: cannot reach ollama at http://127.0.0.1:9; start `ollama serve` or set OLLAMA_HOST\n"
    assert down.stdout == "" and not (tmp_path / "run").exists()
    missing = subprocess.run([*base, "--model", "ollama:not-pulled", "--ollama-host", server.url],
                             capture_output=True, text=True, timeout=60)
    assert (missing.returncode, missing.stdout, (tmp_path / "run").exists()) == (1, "", False)
    assert missing.stderr == (f"error: ollama:not-pulled at {server.url}: model 'not-pulled' is not pulled; run "
                              "`ollama pull not-pulled`\n")


def test_a_run_survives_every_query_that_crashed_it_and_no_session_state_crosses_tasks(bundle, tasks, ollama_server,
                                                                                      tmp_path):
    # issue 16: each of these once ended `dptool eval` with a traceback, and a resume at temperature 0 met it again
    crashers = {
        "SELECT 'abc": "error: cannot parse SQL: Error tokenizing 'SELECT 'ab' (an unclosed quote or comment?)",
        "SELECT " + "(" * 600 + "1" + ")" * 600: "error: cannot parse SQL: nested too deeply; flatten the parentheses "
                                                 "or use a CTE",  # deep enough for sqlglotc (test_sandbox)
        "SELECT INTERVAL 100000000 YEAR": "error: OverflowError: Python int too large to convert to C int",
        "SELECT len(list_sort(list_reverse(range(60000000))))":
            "error: query stopped after 1 s (the time limit); make it cheaper: filter, aggregate or add LIMIT",
    }
    in_list = "select 1 where 1 in (" + ", ".join(str(i) for i in range(400_000)) + ")"
    with duckdb.connect() as con:
        con.execute("select setseed(0.42)")
        seeded = [f"r\n{con.execute('select random()').fetchone()[0]!r}\n(1 row)" for _ in range(2)]
    sql = [*crashers, in_list, "select setseed(0.42) as s", "select random() as r"]
    ollama_server.chat_replies += [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": q}} for q in sql]},
        answer_reply(tasks[0]["gold"]),
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": "select random() as r"}}]},  # the next task
        answer_reply(tasks[1]["gold"]),
    ]
    out = tmp_path / "run"
    proc = run_eval(bundle, ollama_server, out, *the_first(tasks, 2), "--sql-timeout", "1")
    assert proc.returncode == 0, proc.stderr
    assert "accuracy 100.0 %: 2 of 2 tasks correct" in proc.stdout and "Traceback" not in proc.stderr

    def tool_outputs(task: dict) -> list[str]:
        transcript = json.loads((out / "transcripts" / f"{task['task_id']}-1.json").read_text(encoding="utf-8"))
        return [m["content"] for m in transcript["messages"] if m["role"] == "tool"]

    first = tool_outputs(tasks[0])
    assert first[:4] == list(crashers.values())
    assert first[4].startswith("error: refused: the SQL is ") and "characters, at most 50,000" in first[4]
    assert first[6] == seeded[0]  # within a task the seed holds
    assert tool_outputs(tasks[1]) != [seeded[1]]  # the next task starts on a fresh connection


def test_the_agent_searches_the_knowledge_base_of_its_task_s_domain(bundle, tasks):
    """Issue 26: a banking task's search_kb reads kb/banking/ only: the marketplace's "Small-Sample Suppression"
    (50 records) is not found beside the bank's "Small Sample Suppression" (10 accounts)."""
    with Agent(LLM("test-model"), bundle, Settings("ollama:test-model")) as agent:
        for domain in ("banking", "ecommerce"):
            task = next(t for t in tasks if t["domain"] == domain)
            kb = agent.kb_of(task)
            assert {p.source for p in kb.passages} == {
                p.relative_to(bundle / "kb" / domain).as_posix() for p in (bundle / "kb" / domain).rglob("*.md")}
            found = {p.source for p, _ in kb.search("Small-Sample Suppression 50 records", k=20)}
            assert ("rules/small_sample_suppression.md" in found) == (domain == "ecommerce"), found
            assert ("rules/small_segment_suppression.md" in found) == (domain == "banking"), found


# ---- any OpenAI-compatible chat-completions endpoint (openai:MODEL), and replies that are not valid Unicode ----------
# on the small bundle (tests/small_bundle.py): t_0001's gold is 42.0 (avg(amount) + 39), t_0002's 3.0 (count(*))

@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    from tests.small_bundle import write_bundle

    return write_bundle(tmp_path_factory.mktemp("small") / "bundle")


def openai_eval(bundle: Path, server, out: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dptool.cli", "eval", str(bundle), "--model", "openai:local-model",
                           "--base-url", server.url, "--out", str(out), *extra], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


def test_eval_runs_through_an_openai_compatible_endpoint_with_tool_calls(small, tmp_path):
    from tests.openai_server import OpenAIServer

    avg_sql = "select avg(amount) + 39 as value from shop.orders"
    with OpenAIServer(api_key="sk-loopback") as server:
        server.replies += [
            {"content": "Let me look.", "tool_calls": [{"name": "run_sql", "arguments": {"sql": avg_sql}}]},
            {"tool_calls": [{"name": "run_sql", "arguments": '{"sql": "select 1'}]},  # malformed JSON arguments
            answer_reply({"value": 42.0}),
            # two calls in one turn (parallel tool calls), each reply bound to its own call
            {"tool_calls": [{"name": "run_sql", "arguments": {"sql": "select count(*) as n from shop.orders"}},
                            {"name": "search_kb", "arguments": {"query": "refunds"}}]},
            answer_reply({"value": 3}),
        ]
        proc = openai_eval(small, server, tmp_path / "run", "--api-key-env", "LOOPBACK_KEY",
                           env={"LOOPBACK_KEY": "sk-loopback"})
    assert proc.returncode == 0, proc.stderr
    assert f"openai:local-model at {server.url}, condition standard: 2 tasks to run" in proc.stdout
    assert "accuracy 100.0 %: 2 of 2 tasks correct" in proc.stdout, proc.stdout
    run = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert run["model"] == "openai:local-model"
    records = lines(tmp_path / "run" / "answers.jsonl")
    assert [(r["task_id"], r["turns"], r["tool_calls"], r["prompt_tokens"], r["completion_tokens"]) for r in records] \
        == [("t_0001", 3, 2, 33, 21), ("t_0002", 2, 2, 22, 14)]

    methods = [(m, p) for m, p, _, _ in server.requests]
    assert methods[0] == ("GET", "/v1/models") and methods.count(("POST", "/v1/chat/completions")) == 5
    assert all(h.get("Authorization") == "Bearer sk-loopback" for _, _, h, _ in server.requests)
    first, second, third, _, fifth = server.chat_bodies
    assert (first["model"], first["temperature"], first["seed"]) == ("local-model", 0, 42)
    assert [t["function"]["name"] for t in first["tools"]] == ["run_sql", "search_kb"]
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert second["messages"][2:] == [
        {"role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "run_sql",
                                                              "arguments": json.dumps({"sql": avg_sql})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "value\n42.0\n(1 row)"}]
    assert third["messages"][-2]["tool_calls"][0]["function"]["arguments"] == '{"sql": "select 1'
    assert third["messages"][-1] == {"role": "tool", "tool_call_id": "call_2",
                                     "content": "error: the arguments of run_sql must be a JSON object"}
    calls, *replies = fifth["messages"][2:]
    assert [c["id"] for c in calls["tool_calls"]] == ["call_1", "call_2"]
    assert [r["tool_call_id"] for r in replies] == ["call_1", "call_2"]
    assert replies[0]["content"] == "n\n3\n(1 row)" and replies[1]["content"].startswith("[")


def test_an_endpoint_that_refuses_the_key_or_lacks_the_model_is_one_line_before_anything_is_written(small, tmp_path):
    from tests.openai_server import OpenAIServer

    out = tmp_path / "run"
    with OpenAIServer(api_key="sk-right") as server:
        wrong = openai_eval(small, server, out, env={"OPENAI_API_KEY": "sk-wrong"})
        unset = openai_eval(small, server, out, "--api-key-env", "NO_SUCH_KEY_VARIABLE")
    assert (wrong.returncode, wrong.stdout, out.exists()) == (1, "", False)
    assert wrong.stderr == (f"error: openai:local-model at {server.url}: HTTP 401, the key was refused "
                            "($OPENAI_API_KEY)\n")
    assert unset.stderr == (f"error: openai:local-model at {server.url}: HTTP 401, the key was refused "
                            "($NO_SUCH_KEY_VARIABLE is not set)\n")
    with OpenAIServer(models=("other-model",)) as server:
        missing = openai_eval(small, server, out)
    assert (missing.returncode, out.exists()) == (1, False)
    assert missing.stderr == (f"error: openai:local-model at {server.url}: the endpoint does not serve model "
                              "'local-model' (it serves other-model)\n")
    down = subprocess.run([sys.executable, "-m", "dptool.cli", "eval", str(small), "--model", "openai:m",
                           "--base-url", "http://127.0.0.1:9/v1", "--out", str(out)], capture_output=True, text=True,
                          timeout=60)
    assert (down.returncode, out.exists()) == (1, False)
    assert down.stderr == "error: cannot reach http://127.0.0.1:9/v1 (ConnectError); start the server or give the " \
                          "right --base-url\n"
    for url in ("notaurl", "http://[::1"):  # not a URL at all: one line too
        bad = subprocess.run([sys.executable, "-m", "dptool.cli", "eval", str(small), "--model", "openai:m",
                              "--base-url", url, "--out", str(out)], capture_output=True, text=True, timeout=60)
        assert (bad.returncode, out.exists()) == (1, False)
        assert bad.stderr.startswith(f"error: cannot reach {url} (") and bad.stderr.count("\n") == 1, bad.stderr


def test_an_endpoint_without_a_model_list_is_taken_at_its_word(small, tmp_path):
    from tests.openai_server import OpenAIServer

    with OpenAIServer(models=None) as server:  # a 429 (rate limit) is waited out
        server.replies += [{"status": 429, "error": "Rate limit reached"}, answer_reply({"value": 42.0}),
                           answer_reply({"value": 3})]
        proc = openai_eval(small, server, tmp_path / "run")
    assert proc.returncode == 0, proc.stderr
    assert "accuracy 100.0 %: 2 of 2 tasks correct" in proc.stdout


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_a_reply_holding_a_lone_surrogate_is_repaired_and_the_run_written(provider, small, ollama_server, tmp_path):
    from tests.openai_server import OpenAIServer

    replies = [{"content": "Checking \ud83d", "tool_calls": [{"name": "run_sql", "arguments": {
                   "sql": "select 'x\ud800' as s"}}]},
               {"content": "\ud83d Done <answer>{\"value\": 42.0}</answer>"}]
    out = tmp_path / "run"
    if provider == "ollama":
        ollama_server.chat_replies += replies
        proc = run_eval(small, ollama_server, out, "--tasks", "t_0001")
    else:
        with OpenAIServer() as server:
            server.replies += replies
            proc = openai_eval(small, server, out, "--tasks", "t_0001")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "accuracy 100.0 %: 1 of 1 tasks correct" in proc.stdout
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: the model's replies held 3 lone surrogates (half a character, not Unicode); each "
                        "was replaced by U+FFFD before use and in the transcripts"]
    record, = lines(out / "answers.jsonl")
    transcript = json.loads((out / record["transcript"]).read_text(encoding="utf-8"))
    assert transcript["invalid_text"] == 3
    assert transcript["messages"][2]["content"] == "Checking \ufffd"
    assert transcript["messages"][3]["content"] == "s\nx\ufffd\n(1 row)"  # the repaired SQL ran


def test_an_oracle_rule_id_is_never_a_path(tmp_path):
    from dptool.errors import DptoolError
    from tests.small_bundle import TASKS, write_bundle

    bundle = write_bundle(tmp_path / "bundle")
    (bundle / "secret.md").write_text("the user's secret\n", encoding="utf-8")  # kb/rules/../../secret.md
    task = {**TASKS[0], "rule_ids": ["refunds_excluded", "../../secret"]}
    with Agent(LLM("test-model"), bundle, Settings("ollama:test-model", condition="oracle")) as agent:
        assert "Refunded orders leave" in agent.task_prompt(TASKS[0])
        with pytest.raises(DptoolError, match=r"secret~[0-9a-f]{16}\.md: rule document of t_0001 not found"):
            agent.task_prompt(task)
