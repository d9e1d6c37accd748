"""The LLM client against a real HTTP server on loopback: retries where they help, one line where not."""

from __future__ import annotations

import pytest

from dptool.llm.client import LLM, LLMError


def test_chat_returns_content_and_tool_calls(ollama_server):
    ollama_server.chat_replies += [{"content": "hello"},
                                   {"tool_calls": [{"name": "run_sql", "arguments": {"sql": "select 1"}}]}]
    llm = LLM("test-model", host=ollama_server.url)
    assert llm.chat([{"role": "user", "content": "hi"}], stage="t") == {"content": "hello", "tool_calls": []}
    reply = llm.chat([{"role": "user", "content": "run"}], stage="t", tools=[{"type": "function", "function": {
        "name": "run_sql", "parameters": {"type": "object", "properties": {"sql": {"type": "string"}}}}}])
    assert reply["tool_calls"] == [{"name": "run_sql", "arguments": {"sql": "select 1"}}]
    body = ollama_server.requests[0][1]
    assert body["options"] == {"temperature": 0, "seed": 42} and body["stream"] is False
    assert llm.usage["t"].calls == 2 and llm.usage["t"].prompt_tokens == 20


def test_a_500_is_retried(ollama_server):
    ollama_server.chat_replies += [{"status": 500}, {"content": "ok"}]
    llm = LLM("test-model", host=ollama_server.url, backoff=0)
    assert llm.chat([{"role": "user", "content": "hi"}], stage="t")["content"] == "ok"


def test_a_timeout_is_retried_then_reported_in_one_line(ollama_server):
    ollama_server.chat_replies += [{"delay": 1.5, "content": "late"}, {"delay": 1.5, "content": "late"}]
    llm = LLM("test-model", host=ollama_server.url, timeout=0.5, retries=1, backoff=0)
    with pytest.raises(LLMError, match=r"no answer within 0.5 s in stage t \(2 tries\)") as info:
        llm.chat([{"role": "user", "content": "hi"}], stage="t")
    assert "\n" not in str(info.value)


def test_a_model_that_is_not_pulled_is_named_once(ollama_server):
    llm = LLM("missing-model", host=ollama_server.url, backoff=0)
    with pytest.raises(LLMError, match="model 'missing-model' is not pulled; run `ollama pull missing-model`"):
        llm.chat([{"role": "user", "content": "hi"}], stage="t")
    assert len(ollama_server.requests) == 1  # a 404 is not retried


def test_no_server_is_one_clear_line():
    llm = LLM("test-model", host="http://127.0.0.1:9", retries=0)
    with pytest.raises(LLMError, match="cannot reach ollama at http://127.0.0.1:9"):
        llm.chat([{"role": "user", "content": "hi"}], stage="t")


def test_malformed_json_is_asked_for_again(ollama_server):
    ollama_server.chat_replies += [{"content": "{not json"}, {"content": '{"ok": true}'}]
    llm = LLM("test-model", host=ollama_server.url)
    assert llm.chat_json([{"role": "user", "content": "json please"}], stage="t") == {"ok": True}
    assert ollama_server.requests[1][1]["format"] == "json"


def test_json_that_never_comes_fails_in_one_line(ollama_server):
    ollama_server.chat_replies += [{"content": "nope"}] * 3
    llm = LLM("test-model", host=ollama_server.url)
    with pytest.raises(LLMError, match="no valid JSON object after 3 tries"):
        llm.chat_json([{"role": "user", "content": "json please"}], stage="t")


def test_cache_replays_without_a_call(ollama_server, tmp_path):
    ollama_server.chat_replies += [{"content": "first"}]
    llm = LLM("test-model", host=ollama_server.url, cache_dir=tmp_path)
    messages = [{"role": "user", "content": "hi"}]
    assert llm.chat(messages, stage="t")["content"] == "first"
    again = LLM("test-model", host=ollama_server.url, cache_dir=tmp_path)
    assert again.chat(messages, stage="t")["content"] == "first"  # no scripted reply left: a call would fail
    assert again.usage["t"].cache_hits == 1 and again.usage["t"].calls == 0


def test_embed(ollama_server):
    llm = LLM("test-model", host=ollama_server.url)
    vectors = llm.embed(["a", "b", "a"], stage="e")
    assert len(vectors) == 3 and vectors[0] == vectors[2] != vectors[1]
    assert len(vectors[0]) == 8


def test_spec_must_name_ollama():
    with pytest.raises(LLMError.__mro__[1], match="expected ollama:MODEL"):
        LLM.from_spec("openai:gpt")
