"""`dptool judge-agreement`: the judge's per-dimension precision and recall against the team's labels (E.3)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dptool.generate.judge import DIMENSIONS, load_sample
from tests.conftest import run_cli

SAMPLE = Path(__file__).parent / "fixtures" / "judge" / "sample.jsonl"


def question_of(body: dict) -> str:
    return re.search(r"^Question: (.*)$", body["messages"][1]["content"], re.MULTILINE).group(1)


def keyword_judge(body: dict) -> dict:
    """A judge that fails leakage on '_' or 'policy', naturalness on '_' or a parameter list, objectivity on
    'healthy', and passes everything else."""
    q = question_of(body)
    fails = set()
    if "_" in q or "policy" in q:
        fails.add("leakage")
    if "_" in q or q.startswith("Output request"):
        fails.add("naturalness")
    if "healthy" in q:
        fails.add("objectivity")
    return {"content": json.dumps({d: {"score": int(d not in fails), "justification": f"{d}: keyword rule."}
                                   for d in DIMENSIONS})}


def test_the_sample_is_labeled_on_every_dimension_with_failures_of_each():
    items = load_sample(SAMPLE)
    assert len(items) >= 12 and len({i["id"] for i in items}) == len(items)
    for dimension in DIMENSIONS:
        failing = [i["id"] for i in items if i["labels"][dimension] == 0]
        assert failing, f"no labeled failure of {dimension}"
        for item in items:
            assert (item["labels"][dimension] == 0) == (dimension in item["notes"]), (item["id"], dimension)
    real = [i for i in items if i["id"].startswith("real-")]
    assert len(real) >= 10 and sum(all(v == 1 for v in i["labels"].values()) for i in real) >= 8
    for item in items:  # the judge sees the gold SQL of every SQL task
        assert item["task"]["gold_sql"] or item["task"]["analysis_type"] == "knowledge_retrieval"


def test_per_dimension_precision_and_recall(ollama_server, tmp_path):
    ollama_server.chat_handler = keyword_judge
    out = tmp_path / "agreement.json"
    proc = run_cli("judge-agreement", "--llm", "ollama:test-model", "--ollama-host", ollama_server.url,
                   "--project-dir", str(tmp_path), "--out", str(out), str(SAMPLE))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["model"] == "ollama:test-model" and result["prompt"] == "judge_v2"
    # leakage: people fail 3 (identifiers, the policy named, the rule spelled out); the keyword judge fails 4
    # (identifiers, the policy named, and two fine questions that say "policy": a counterfactual and a
    # knowledge question); it misses the spelled-out rule. 16 of its 17 passes are right; it passes 16 of 18.
    assert result["dimensions"]["leakage"] == {
        "n": 21, "human_pass_rate": 0.8571, "judge_pass_rate": 0.8095, "precision": 0.9412, "recall": 0.8889,
        "fail_precision": 0.5, "fail_recall": 0.6667, "agreement": 0.8571}
    # naturalness: it catches the identifiers and the parameter list, not the raw Czech codes
    nat = result["dimensions"]["naturalness"]
    assert (nat["precision"], nat["recall"], nat["fail_precision"], nat["fail_recall"]) == (0.9474, 1.0, 1.0, 0.6667)
    # correctness: it never fails anything, so its passes are as good as the labels' pass rate
    cor = result["dimensions"]["correctness"]
    assert (cor["precision"], cor["recall"], cor["fail_precision"], cor["fail_recall"]) == (0.8095, 1.0, None, 0.0)
    # admission (all eight): 15 admitted, 9 of them by people too; people admit 10
    assert result["admission"]["precision"] == 0.6 and result["admission"]["recall"] == 0.9
    assert result["admitted_human_pass_rate"]["leakage"] == round(14 / 15, 4)
    assert "| leakage | 21 | 86% | 81% | 94% | 89% | 50% | 67% | 93% |" in proc.stdout
    assert "judge 21 (0 from the cache)" in proc.stdout


def test_a_judge_that_times_out_is_one_line(ollama_server, tmp_path):
    ollama_server.chat_handler = lambda body: {"delay": 0.6, **keyword_judge(body)}
    proc = run_cli("judge-agreement", "--llm", "ollama:test-model", "--ollama-host", ollama_server.url,
                   "--llm-timeout", "0.2", "--project-dir", str(tmp_path), str(SAMPLE))
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == (
        f"error: ollama:test-model at {ollama_server.url}: no answer within 0.2 s in stage judge (3 tries)")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(("content", "message"), [
    ('{"id": "a", "task": {}, "context": {}}\n', "sample.jsonl:1: missing 'labels'"),
    ("not json\n", "sample.jsonl:1: not JSON"),
])
def test_a_malformed_sample_is_one_line(tmp_path, ollama_server, content, message):
    (tmp_path / "sample.jsonl").write_text(content, encoding="utf-8")
    proc = run_cli("judge-agreement", "--llm", "ollama:test-model", "--ollama-host", ollama_server.url,
                   str(tmp_path))
    assert proc.returncode == 1 and message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not ollama_server.requests
