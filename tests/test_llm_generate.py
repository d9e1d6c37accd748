"""`dptool generate --llm ollama:test-model` end to end: backward phrasing, stage 1, the judge, the rewrite, export.

A copy of the built demo project, with its manifest restricted to one metric (Average Delivery Time) and
the two rules that change it, so that one dbt round is enough. The model is a loopback server whose replies
are a function of the request: the number of calls does not matter.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from dptool.cli.llm import LLM_OPTIONS
from dptool.generate.pipeline import generate
from dptool.llm.client import CACHE_DIR, LLMError, project_llm
from tests.conftest import run_cli
from tests.ollama_server import OllamaServer

DIMENSIONS = ("objectivity", "leakage", "naturalness", "relevance", "format_alignment", "correctness", "reasoning",
              "scope")


def field(text: str, name: str) -> str:
    match = re.search(rf"^{re.escape(name)}: (.*)$", text, re.MULTILINE)
    return match.group(1).strip() if match else ""


def model(body: dict) -> dict:
    """The scripted model. Point queries come back naming a column (stage 1 catches it, the rewrite fixes it);
    rankings come back stilted (the judge fails naturalness, the rewrite fixes it); comparisons fail
    correctness (rejected, no rewrite); the judge's first reply on a threshold task is not JSON."""
    system, user, last = (body["messages"][0]["content"], body["messages"][1]["content"],
                          body["messages"][-1]["content"])
    kind = field(user, "Analysis type").split(" ")[0]
    sentence = field(user, "Policy scope sentence")
    sentence = "" if sentence.startswith("(none") else " " + sentence
    if system.startswith("You write the questions"):
        scope, shape = field(user, "Scope of the answer"), field(user, "The answer must contain")
        if kind == "point_query":  # and without the policy scope sentence: stage 1's scope_mismatch catches it too
            question = f"What was the value by customer_state for {scope}? Please give {shape}."
        elif kind == "ranking":
            question = f"Kindly enumerate {scope}; provide {shape}.{sentence}"
        else:
            question = f"Looking at {scope}: what is the answer? Please give {shape}.{sentence}"
        return {"content": json.dumps({"question": question})}
    if system.startswith("You revise the questions"):
        question = field(user, "Question").replace("Kindly enumerate", "Which are").replace("by customer_state ", "")
        if sentence.strip() not in question:
            question += sentence
        return {"content": json.dumps({"question": question + " Thanks."})}
    if system.startswith("You review the tasks"):
        if kind == "threshold_crossing" and "not one valid JSON" not in last:
            return {"content": "{'objectivity': 1,"}
        fails = {"naturalness"} if "Kindly" in field(user, "Question") else set()
        fails |= {"correctness"} if kind == "comparison" else set()
        return {"content": json.dumps({d: {"score": int(d not in fails), "justification": f"{d} checked."}
                                       for d in DIMENSIONS})}
    return {"status": 500, "error": "unexpected prompt"}


@pytest.fixture(scope="module")
def project(built_demo_copy):
    """The copy, and a function restricting its manifest to Average Delivery Time (before each generate)."""
    manifest_path = built_demo_copy.manifest_path
    original = json.loads(manifest_path.read_text(encoding="utf-8"))

    def restrict(metrics=("avg_delivery_days",)):
        manifest = json.loads(json.dumps(original))
        for node in manifest["nodes"].values():
            for meta in (node.get("meta") or {}, (node.get("config") or {}).get("meta") or {}):
                if "metric" in (meta.get("dptool") or {}) and node["name"] not in metrics:
                    del meta["dptool"]["metric"]
        for macro in manifest["macros"].values():
            rule = (macro.get("meta") or {}).get("dptool", {}).get("rule")
            if rule is not None:
                kept = [m for m in rule["modifies"] if m in metrics]
                if kept:
                    rule["modifies"] = kept
                else:
                    del macro["meta"]["dptool"]["rule"]
        manifest_path.write_text(json.dumps(manifest), encoding="utf-8")

    yield built_demo_copy, restrict
    manifest_path.write_text(json.dumps(original), encoding="utf-8")


def _generate(project_dir: Path, out: Path, server: OllamaServer, model_name: str = "ollama:test-model"):
    return run_cli("generate", "--project-dir", str(project_dir), "--out", str(out), "--target", "4",
                   "--min-per-type", "0", "--quiet", "--llm", model_name, "--ollama-host", server.url)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "warehouse.duckdb"}


def test_a_model_that_is_not_pulled_stops_before_any_work(project, tmp_path):
    dbt, restrict = project
    restrict()
    with OllamaServer() as server:
        proc = _generate(dbt.project_dir, tmp_path / "bundle", server, "ollama:qwen2.5:7b")
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f"error: ollama:qwen2.5:7b at {server.url}: model 'qwen2.5:7b' is not pulled; "
                                   "run `ollama pull qwen2.5:7b`")
    assert not (tmp_path / "bundle").exists() and not [r for r in server.requests if r[0] == "/api/chat"]


@pytest.fixture(scope="module")
def llm_bundle(project, tmp_path_factory):
    dbt, restrict = project
    restrict()
    out = tmp_path_factory.mktemp("llm") / "bundle"
    with OllamaServer() as server:
        server.chat_handler = model
        proc = _generate(dbt.project_dir, out, server)
        requests = [b for p, b in server.requests if p == "/api/chat"]
    assert proc.returncode == 0, proc.stderr
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    records = {r["task_id"]: r for r in map(json.loads, (out / "judge.jsonl").read_text(encoding="utf-8").splitlines())}
    return out, proc, tasks, records, requests


def test_generate_phrases_judges_rewrites_and_exports(llm_bundle, project):
    out, proc, tasks, records, _ = llm_bundle
    dbt, _ = project
    kinds = {t["analysis_type"] for t in tasks}
    assert {"knowledge_retrieval", "point_query", "ranking", "threshold_crossing"} <= kinds
    assert "comparison" not in kinds  # the judge failed correctness: rejected, not rewritten
    for task in tasks:
        record = records[task["task_id"]]
        assert record["admitted"] and task["question"] == record["questions"][-1] != record["template_question"]
        if task["analysis_type"] in ("point_query", "ranking"):
            assert record["rewritten"] and task["question"].endswith("Thanks.")
            assert "customer_state" not in task["question"] and "Kindly" not in task["question"]
        else:
            assert not record["rewritten"] and len(record["verdicts"]) == 1
    ranking = next(records[t["task_id"]] for t in tasks if t["analysis_type"] == "ranking")
    assert [v["naturalness"]["score"] for v in ranking["verdicts"]] == [0, 1]
    point = next(records[t["task_id"]] for t in tasks if t["analysis_type"] == "point_query")
    assert "customer_state" in point["questions"][0] and len(point["verdicts"]) == 1  # stage 1 caught it
    # the policy scope sentence: word for word in every question whose answer does not apply every policy
    from dptool.generate.llm_phrase import scope_sentence
    from dptool.project.catalog import load_catalog

    catalog = load_catalog(json.loads(dbt.manifest_path.read_text(encoding="utf-8")))
    scoped = [t for t in tasks if t["gold_sql"] and scope_sentence(t, catalog)]
    assert scoped
    for task in scoped:
        assert scope_sentence(task, catalog) in task["question"], task["question"]
        if task["analysis_type"] == "point_query":  # the model left it out: caught by stage 1, put back by the rewrite
            assert scope_sentence(task, catalog) not in records[task["task_id"]]["questions"][0]
    rejected = [r for r in records.values() if not r["admitted"]]
    comparisons = [r for r in rejected if r["reason"] == "judge: correctness"]
    assert comparisons and all(not r["rewritten"] for r in comparisons)
    gold = dbt.project_dir / "models" / "dptool_gold"
    models = sorted(p.stem for p in gold.glob("*.sql") if p.stem != "dptool_tasks")
    assert models == sorted(t["task_id"] for t in tasks if t["gold_sql"])
    described = [m for m in yaml.safe_load((gold / "_dptool_gold.yml").read_text(encoding="utf-8"))["models"]
                 if m["name"] != "dptool_tasks"]  # the overview model lists them all
    assert {m["description"].splitlines()[0] for m in described} == {t["question"] for t in tasks if t["gold_sql"]}
    assert "judge:" in proc.stdout and "requests: phrase" in proc.stdout


def test_the_card_says_which_stages_used_which_model(llm_bundle):
    out, _, tasks, records, requests = llm_bundle
    card = (out / "card.md").read_text(encoding="utf-8")
    assert "- Question phrasing: ollama:test-model (prompt phrase_v2), judged on DI-Bench's eight dimensions" in card
    stage_of = {"You write": "phrase", "You review": "judge", "You revise": "rewrite"}
    counts = {s: sum(b["messages"][0]["content"].startswith(k) for b in requests) for k, s in stage_of.items()}
    malformed = sum("not one valid JSON" in b["messages"][-1]["content"] for b in requests)
    thresholds = sum(t["analysis_type"] == "threshold_crossing" for t in tasks)
    assert malformed == thresholds > 0  # each asked again once
    assert counts["phrase"] == sum(bool(r["questions"]) for r in records.values())
    assert counts["judge"] == sum(len(r["verdicts"]) for r in records.values()) + malformed
    assert counts["rewrite"] == sum(r["rewritten"] for r in records.values())
    for stage, prompt in (("phrase", "phrase_v2"), ("judge", "judge_v2"), ("rewrite", "rewrite_v2")):
        # the loopback server counts 10 prompt and 5 completion tokens per reply
        assert (f"| {stage} | ollama:test-model | {prompt} | {counts[stage]} | {10 * counts[stage]} | "
                f"{5 * counts[stage]} |") in card
    admitted = sum(r["admitted"] for r in records.values())
    assert f"admitted: {admitted} (" in card and "| correctness | " in card


def test_a_rerun_from_the_cache_gives_the_same_bundle_without_a_call(llm_bundle, project, tmp_path):
    out, _, _, _, first_requests = llm_bundle
    dbt, restrict = project
    restrict()
    assert list((dbt.project_dir / CACHE_DIR).glob("*.json"))
    with OllamaServer() as server:
        server.chat_handler = lambda body: {"status": 500, "error": "a rerun must not ask the model"}
        proc = _generate(dbt.project_dir, tmp_path / "again", server)
        missed = [b for p, b in server.requests if p == "/api/chat"]
    if missed:  # say which request was not in the cache, next to the first run's with the same question
        question = field(missed[0]["messages"][1]["content"], "Question")
        before = [b for b in first_requests if field(b["messages"][1]["content"], "Question") == question]
        (tmp_path / "missed.json").write_text(json.dumps({"missed": missed[0], "first run": before}, indent=1),
                                              encoding="utf-8")
        pytest.fail(f"{len(missed)} requests not in the cache; the first: {tmp_path / 'missed.json'}")
    assert proc.returncode == 0, proc.stderr
    first, second = _files(out), _files(tmp_path / "again")
    assert first.keys() == second.keys() and "judge.jsonl" in first
    for name, content in first.items():
        assert content == second[name], name


def test_a_server_error_mid_run_leaves_the_bundle_as_it_was(llm_bundle, project):
    out, *_ = llm_bundle
    before = _files(out)
    dbt, restrict = project
    restrict()

    def broken_for_knowledge(body):  # the SQL tasks go through; the judge fails on the knowledge tasks
        if "Analysis type: knowledge_retrieval" in body["messages"][1]["content"] and \
                body["messages"][0]["content"].startswith("You review"):
            return {"status": 500, "error": "CUDA error: out of memory"}
        return model(body)

    with OllamaServer(models=("other-model",)) as server:  # another model: nothing in the cache
        server.chat_handler = broken_for_knowledge
        llm = project_llm("ollama:other-model", dbt.project_dir, host=server.url, options=LLM_OPTIONS)
        llm.backoff = 0
        with pytest.raises(LLMError) as info:
            generate(dbt.project_dir, out, target_tasks=4, min_per_type=0, llm=llm, echo=lambda _: None,
                     progress=False)
        chats = [b for p, b in server.requests if p == "/api/chat"]
    assert str(info.value) == f"ollama:other-model at {server.url}: HTTP 500 in stage judge: CUDA error: out of memory"
    assert len(chats) > 10  # it failed after the SQL tasks had been phrased and judged
    assert _files(out) == before
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".bundle.")]
