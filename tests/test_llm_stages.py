"""The LLM stages against a real HTTP server on loopback: config, prompts, backward phrasing, the judge, the rewrite.

No dbt here: tasks are made by hand for the small `shop` catalog of tests/fixtures/shop_manifest.json.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dptool.errors import DptoolError
from dptool.generate.judge import DIMENSIONS, PHRASING, Reviewer, judge, parse_verdict, verdict_problem
from dptool.generate.llm_phrase import generate_question, task_context
from dptool.generate.phrase import REPORTABLE
from dptool.llm.client import LLM, LLMError, load_prompt, resolve_spec
from dptool.project.catalog import load_catalog

FIXTURES = Path(__file__).parent / "fixtures"
SHOP = load_catalog(json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8")))


def shop_task(task_id: str, analysis_type: str = "point_query", **changes) -> dict:
    task = {
        "task_id": task_id, "domain": "shop", "analysis_type": analysis_type, "tier": "knowledge+analytics+rule",
        "question": "What was our Average Order Value for state SP in Q3 2017? Give the answer in BRL.",
        "answer_format": {"type": "value", "unit": "BRL", "format": "currency"},
        "gold": {"value": 101.25}, "base": {"value": 99.5}, "tolerance": {"rel_tol": 0.001, "abs_tol": 0.005},
        "gold_sql": 'SELECT AVG(amount) AS value FROM "shop"."payments" AS p WHERE p.is_test = FALSE',
        "metric_ids": ["avg_order_value"], "rule_ids": ["exclude_tests"], "rule_types": ["exclusionary"],
        "rule_scope": "all", "rules_in_force": ["capital_override", "exclude_tests"],
        "dimension": "state", "slice": {"window": {"start": "2017-07-01", "end": "2017-10-01", "label": "Q3 2017"},
                                        "state": "SP"},
    }
    return {**task, **changes}


def field(text: str, name: str) -> str:
    match = re.search(rf"^{re.escape(name)}: (.*)$", text, re.MULTILINE)
    return match.group(1).strip() if match else ""


def verdict(fails=(), why="") -> dict:
    return {"content": json.dumps({d: {"score": 0 if d in fails else 1,
                                       "justification": why or f"{d} is fine."} for d in DIMENSIONS})}


class Script:
    """A scripted model keyed on the task: what it phrases, and how its judge scores each version."""

    def __init__(self, questions: dict[str, str], judged: list[tuple[str, tuple]]):
        self.questions = questions  # scope substring -> question
        self.judged = judged  # (question substring, failing dimensions), the first match counts
        self.calls: list[str] = []

    def __call__(self, body: dict) -> dict:
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        if system.startswith("You write the questions"):
            self.calls.append("phrase")
            scope = field(user, "Scope of the answer")
            return {"content": json.dumps({"question": next(q for k, q in self.questions.items() if k in scope)})}
        if system.startswith("You revise the questions"):
            self.calls.append("rewrite")
            question = field(user, "Question")
            return {"content": json.dumps({"question": question.replace("avg_order_value", "spending")
                                           .replace("Kindly state", "What was") + " Thanks."})}
        if system.startswith("You review the tasks"):
            self.calls.append("judge")
            question = field(user, "Question")
            fails = next((f for k, f in self.judged if k in question), ())
            return verdict(fails, "Reads like a form." if "naturalness" in fails else "")
        return {"status": 500, "error": "unexpected prompt"}


# --- configuration ----------------------------------------------------------------------------------------------


def test_the_model_comes_from_the_flag_then_the_environment_then_dbt_project_yml(tmp_path, monkeypatch):
    monkeypatch.delenv("DPTOOL_LLM", raising=False)
    (tmp_path / "dbt_project.yml").write_text("name: p\nvars:\n  dptool:\n    llm: ollama:from-project\n",
                                              encoding="utf-8")
    assert resolve_spec(None, tmp_path) == ("ollama:from-project", "dbt_project.yml vars.dptool.llm")
    monkeypatch.setenv("DPTOOL_LLM", "ollama:from-env")
    assert resolve_spec(None, tmp_path) == ("ollama:from-env", "$DPTOOL_LLM")
    assert resolve_spec("ollama:from-flag", tmp_path) == ("ollama:from-flag", "--llm")
    assert resolve_spec("none", tmp_path) == (None, "--llm")  # the flag turns a configured model off
    monkeypatch.delenv("DPTOOL_LLM")
    (tmp_path / "dbt_project.yml").write_text("name: p\n", encoding="utf-8")
    assert resolve_spec(None, tmp_path) == (None, "")


def test_prompts_are_versioned_files():
    for name in ("phrase", "judge", "rewrite", "link"):
        prompt = load_prompt(name)
        assert (prompt.name, prompt.version, prompt.label) == (name, "1", f"{name}_v1")
    with pytest.raises(DptoolError, match="prompt 'judge' version '9' not found"):
        load_prompt("judge", "9")
    judge_text = load_prompt("judge").texts["system"]
    for dimension in DIMENSIONS:
        assert f"- {dimension}:" in judge_text


def test_ensure_model_names_a_model_that_is_not_pulled(ollama_server):
    LLM("test-model", host=ollama_server.url).ensure_model()
    ollama_server.models.add("qwen2.5:latest")
    LLM("qwen2.5", host=ollama_server.url).ensure_model()  # ollama's implicit :latest
    with pytest.raises(LLMError, match=r"model 'qwen2.5:7b' is not pulled; run `ollama pull qwen2.5:7b`"):
        LLM("qwen2.5:7b", host=ollama_server.url).ensure_model()


# --- backward phrasing ------------------------------------------------------------------------------------------


def test_the_phrase_prompt_holds_what_di_bench_names_and_no_database_internals(ollama_server):
    ollama_server.chat_replies.append({"content": json.dumps({"question": " What was  our spending? "})})
    task = shop_task("t_0001")
    llm = LLM("test-model", host=ollama_server.url)
    question = generate_question(llm, load_prompt("phrase"), task, task_context(task, SHOP))
    assert question == "What was our spending?"
    user = ollama_server.requests[0][1]["messages"][1]["content"]
    assert field(user, "Metric") == "Average Order Value"
    assert field(user, "Analysis type").startswith("point_query (one value of the metric")
    assert field(user, "Gold answer (JSON)") == '{"value": 101.25}'
    assert field(user, "Scope of the answer") == "Average Order Value for state SP in Q3 2017"
    assert "test orders" in user.lower()  # the rule document's text is there, for understanding only
    for internal in ("payments", "is_test", "exclude_tests", "SELECT", "avg_order_value"):
        assert internal not in user, internal
    assert ollama_server.requests[0][1]["format"] == "json"


def test_a_reply_without_a_question_is_asked_for_again_then_fails_in_one_line(ollama_server):
    ollama_server.chat_replies += [{"content": '{"text": "What?"}'}, {"content": '{"question": "What was it?"}'}]
    task = shop_task("t_0001")
    llm = LLM("test-model", host=ollama_server.url)
    assert generate_question(llm, load_prompt("phrase"), task, task_context(task, SHOP)) == "What was it?"
    retry = ollama_server.requests[1][1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": '{"text": "What?"}'}
    assert 'needs a non-empty string "question"' in retry[-1]["content"]
    ollama_server.chat_replies += [{"content": '{"q": 1}'}] * 3
    with pytest.raises(LLMError, match=r"does not follow the requested format after 3 tries \(stage phrase") as info:
        generate_question(llm, load_prompt("phrase"), task, task_context(task, SHOP))
    assert "\n" not in str(info.value)


# --- the judge --------------------------------------------------------------------------------------------------


def test_verdicts_are_eight_binary_scores():
    reply = {d: {"score": 1, "justification": "  fine\n here. "} for d in DIMENSIONS}
    reply["scope"] = {"score": "fail", "justification": "Broader than the gold."}
    reply["naturalness"] = {"pass": True, "justification": "ok"}
    parsed = parse_verdict(reply)
    assert parsed.failed == ["scope"] and not parsed.passed
    assert parsed.justifications["objectivity"] == "fine here."
    assert verdict_problem({d: 1 for d in DIMENSIONS if d != "leakage"}) == "missing dimensions leakage"
    assert verdict_problem({**{d: 1 for d in DIMENSIONS}, "scope": {"score": 0.5}}) == 'scope needs "score": 0 or 1'
    assert set(PHRASING) == {"naturalness", "leakage", "format_alignment"}


def test_a_judge_reply_missing_a_dimension_is_asked_for_again(ollama_server):
    partial = {d: {"score": 1, "justification": "ok"} for d in DIMENSIONS if d != "scope"}
    ollama_server.chat_replies += [{"content": "{not json"}, {"content": json.dumps(partial)}, verdict(("scope",))]
    task = shop_task("t_0001")
    result = judge(LLM("test-model", host=ollama_server.url), load_prompt("judge"), task, task_context(task, SHOP))
    assert result.failed == ["scope"]
    asked = [body["messages"][-1]["content"] for _, body in ollama_server.requests]
    assert "not one valid JSON object" in asked[1] and "missing dimensions scope" in asked[2]
    user = ollama_server.requests[0][1]["messages"][1]["content"]
    assert task["gold_sql"] in user and "Question: What was our Average Order Value" in user


# --- phrase, stage 1, judge, rewrite ------------------------------------------------------------------------------


def in_state(state: str) -> dict:
    return {"window": {"start": "2017-07-01", "end": "2017-10-01", "label": "Q3 2017"}, "state": state}


def test_review_admits_rewrites_once_and_rejects(ollama_server):
    script = Script(
        questions={"state SP": "What was our avg_order_value for state SP in Q3 2017, in BRL?",  # an identifier
                   "state RJ": "Kindly state our Average Order Value for state RJ in Q3 2017 in BRL.",
                   "state MG": "What was our Average Order Value for state MG in Q3 2017, in BRL?",
                   "state BA": "Kindly state the Average Order Value for state BA in Q3 2017 in BRL."},
        judged=[("Kindly", ("naturalness",)), ("state MG", ("correctness",)),
                # BA's rewrite still reads badly: one rewrite only, then rejected
                ("What was the Average Order Value for state BA", ("naturalness",))])
    ollama_server.chat_handler = script
    tasks = [shop_task("t_0001"), shop_task("t_0002", slice=in_state("RJ")),
             shop_task("t_0003", slice=in_state("MG")), shop_task("t_0004", slice=in_state("BA")),
             shop_task("t_0005", slice=in_state("DF"), gold={"value": 99.5})]  # the rule changed nothing
    reviewer = Reviewer(LLM("test-model", host=ollama_server.url), SHOP)
    kept, rejected = reviewer(tasks)
    assert [t["task_id"] for t in kept] == ["t_0001", "t_0002"]
    assert kept[0]["question"] == "What was our spending for state SP in Q3 2017, in BRL? Thanks."
    assert kept[1]["question"] == "What was our Average Order Value for state RJ in Q3 2017 in BRL. Thanks."
    assert rejected["rule_without_effect"] == 1 and sum(rejected.values()) == 1
    assert reviewer.reasons == {"t_0003": "judge: correctness", "t_0004": "judge: naturalness",
                                "t_0005": "stage 1: rule_without_effect"}
    records = {r["task_id"]: r for r in reviewer.review.records}
    assert records["t_0001"]["rewritten"] and len(records["t_0001"]["verdicts"]) == 1  # stage 1 caught it first
    assert records["t_0004"]["rewritten"] and len(records["t_0004"]["verdicts"]) == 2
    assert records["t_0003"]["rewritten"] is False
    assert records["t_0005"]["questions"] == []  # no LLM call for a task that fails on its answer
    assert records["t_0002"]["verdicts"][0]["naturalness"] == {"score": 0, "justification": "Reads like a form."}
    counts = reviewer.review.counts
    assert (counts["judged"], counts["admitted"], counts["admitted_after_rewrite"], counts["rewritten"],
            counts["rejected_by_judge"]) == (4, 2, 2, 3, 2)
    assert script.calls.count("phrase") == 4 and script.calls.count("rewrite") == 3
    assert reviewer.review.failed_first == {"naturalness": 2, "correctness": 1}
    assert reviewer.review.failed_final == {"correctness": 1, "naturalness": 1}


def test_a_500_is_retried_and_a_timeout_is_one_line(ollama_server):
    ollama_server.chat_replies += [{"status": 500}, {"content": '{"question": "What was our spending?"}'}]
    task = shop_task("t_0001")
    llm = LLM("test-model", host=ollama_server.url, backoff=0)
    assert generate_question(llm, load_prompt("phrase"), task, task_context(task, SHOP)) == "What was our spending?"
    ollama_server.chat_handler = lambda body: {"delay": 1.0, "content": '{"question": "late"}'}
    slow = LLM("test-model", host=ollama_server.url, timeout=0.3, retries=1, backoff=0)
    with pytest.raises(LLMError, match=r"no answer within 0.3 s in stage phrase \(2 tries\)") as info:
        Reviewer(slow, SHOP)([shop_task("t_0002")])
    assert "\n" not in str(info.value)


def test_a_rerun_from_the_cache_reports_the_same_requests_and_tokens(ollama_server, tmp_path):
    script = Script({"state": "What was our Average Order Value for state SP in Q3 2017, in BRL?"}, [])
    ollama_server.chat_handler = script
    first = LLM("test-model", host=ollama_server.url, cache_dir=tmp_path)
    kept, _ = Reviewer(first, SHOP)([shop_task("t_0001")])
    again = LLM("test-model", host=ollama_server.url, cache_dir=tmp_path)
    kept_again, _ = Reviewer(again, SHOP)([shop_task("t_0001")])
    assert kept == kept_again and len(script.calls) == 2  # phrase and judge, once
    for stage in ("phrase", "judge"):
        assert (first.usage[stage].calls, again.usage[stage].cache_hits) == (1, 1)
        assert first.usage[stage].requests == again.usage[stage].requests == 1
        assert first.usage[stage].tokens == again.usage[stage].tokens == (10, 5)


@pytest.mark.parametrize("removed", [["PR"], []])
def test_a_listing_whose_policies_remove_groups_asks_the_model_to_say_so(ollama_server, removed):
    """removed_group_asked checks the words REPORTABLE in every listing question whose rules remove a group; the
    model is told to write them exactly when they are due (a question without them would be dropped)."""
    ollama_server.chat_replies.append({"content": json.dumps({"question": "Break it down by state, please?"})})
    task = shop_task("t_0009", "decomposition", gold=[{"state": "SP", "value": 1.0}],
                     answer_format={"type": "breakdown", "key": "state"}, slice={"window": None},
                     support={"removed": removed, "groups": []})
    llm = LLM("test-model", host=ollama_server.url)
    generate_question(llm, load_prompt("phrase"), task, task_context(task, SHOP))
    scope = field(ollama_server.requests[0][1]["messages"][1]["content"], "Scope of the answer")
    assert scope.startswith("Average Order Value for every state, over the whole history")
    assert (REPORTABLE in scope) is bool(removed)
