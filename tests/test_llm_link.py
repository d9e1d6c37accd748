"""`dptool link`: rule -> metric links proposed by a (scripted) LLM, verified by executing them with dbt."""

from __future__ import annotations

import json
import re

import duckdb
import jinja2
import pytest

from dptool.outdir import MARKER
from tests.conftest import run_cli
from tests.ollama_server import OllamaServer

RULES = ("outlier_exclusion", "sao_paulo_approval_clock", "revenue_recognition")
SP_CLOCK = ("case when customer_state = 'SP' then date_diff('day', coalesce(order_approved_at, "
            "order_purchase_timestamp), order_delivered_customer_date) else delivery_days end")
PROPOSALS = {
    "Delivery Time Outlier Exclusion": [
        {"metric": "avg_delivery_days", "applies_when": {"order_status": "delivered"}, "where": ["delivery_days <= 60"],
         "reason": "Deliveries over 60 days leave the average."},
        {"metric": "on_time_delivery_rate", "where": ["delivery_dayz <= 60"]},  # wrong, and does not build
    ],
    "São Paulo Approval Clock Override": [
        {"metric": "avg_delivery_days", "applies_when": {"customer_state": "SP"},
         "columns": {"delivery_days": SP_CLOCK}, "reason": "For SP the clock starts at payment approval."},
    ],
    "Revenue Recognition": [
        {"metric": "gmv", "where": ["1 = 1"]},  # declared, but this change changes nothing
        {"metric": "Revenue per Order", "where": ["order_status not in ('canceled', 'unavailable')"]},  # a label
        {"metric": "Net Promoter Score", "where": ["nps >= 9"]},  # no such metric
    ],
}


def proposer(body: dict) -> dict:
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    if not system.startswith("You connect the business rule documents"):
        return {"status": 500, "error": "unexpected prompt"}
    title = re.search(r"^Rule document: (.*)$", user, re.MULTILINE).group(1)
    return {"content": json.dumps({"links": PROPOSALS.get(title, [])})}


def _link(project_dir, server, *extra):
    rules = [a for r in RULES for a in ("--rule", r)]
    return run_cli("link", "--project-dir", str(project_dir), "--llm", "ollama:test-model", "--ollama-host",
                   server.url, *rules, *extra)


def test_a_persistent_server_error_is_one_line_and_writes_nothing(built_demo_copy, tmp_path):
    with OllamaServer() as server:
        server.chat_handler = lambda body: {"status": 503, "error": "server busy"}
        proc = _link(built_demo_copy.project_dir, server, "--out", str(tmp_path / "links"))
        tries = [r for r in server.requests if r[0] == "/api/chat"]
    assert proc.returncode == 1 and len(tries) == 3  # retried: a 5xx may pass
    assert proc.stderr.strip().splitlines() == [
        f"error: ollama:test-model at {server.url}: HTTP 503 in stage link: server busy"]
    assert not (tmp_path / "links").exists()


@pytest.fixture(scope="module")
def linked(built_demo_copy):
    root = built_demo_copy.project_dir
    manifest_before = built_demo_copy.manifest_path.read_bytes()
    with OllamaServer() as server:
        server.chat_handler = proposer
        proc = _link(root, server)
    assert proc.returncode == 0, proc.stderr
    out = root / "target" / "dptool_link"
    return root, proc, json.loads((out / "report.json").read_text(encoding="utf-8")), manifest_before


def test_link_reports_precision_and_recall_against_the_declared_links(linked):
    _, proc, report, _ = linked
    s = report["scores"]
    # proposed: 6 links, 4 of them declared (avg_delivery_days twice, gmv, revenue_per_order); all 4 declared found
    assert (s["links"]["proposed"], s["links"]["declared"], s["links"]["correct"]) == (6, 4, 4)
    assert (s["links"]["precision"], s["links"]["recall"]) == (0.6667, 1.0)
    # executed: gmv's `1 = 1` changes nothing, the wrong link does not build, the unknown metric is never run
    assert (s["verified_links"]["precision"], s["verified_links"]["recall"]) == (1.0, 0.75)
    assert (s["conditions"]["precision"], s["conditions"]["recall"]) == (0.5, 1.0)
    outcome = {(p["rule"], p["metric"]): p["outcome"] for p in report["proposals"]}
    assert outcome == {
        ("outlier_exclusion", "avg_delivery_days"): "changes",
        ("outlier_exclusion", "on_time_delivery_rate"): "build failed",
        ("sao_paulo_approval_clock", "avg_delivery_days"): "changes",
        ("revenue_recognition", "gmv"): "no change",
        ("revenue_recognition", "revenue_per_order"): "changes",
        ("revenue_recognition", "Net Promoter Score"): "unknown metric",
    }
    sp = next(p for p in report["proposals"] if p["rule"] == "sao_paulo_approval_clock")
    assert "overall and by customer_state" in sp["detail"] and sp["values"]["base"] != sp["values"]["proposed"]
    assert "| rule → metric, as proposed | 6 | 4 | 4 | 66.7% | 100.0% |" in proc.stdout
    assert "| rule → metric, answer changed | 3 | 4 | 3 | 100.0% | 75.0% |" in proc.stdout
    assert "nothing was applied" in proc.stdout


def test_suggestions_are_draft_macros_for_review_and_nothing_is_applied(linked, built_demo_copy):
    root, _, report, manifest_before = linked
    out = root / "target" / "dptool_link"
    written = sorted([f"{r}.sql" for r in RULES] + ["report.json", "report.md", MARKER])
    assert sorted(p.name for p in out.iterdir()) == written
    outlier = (out / "outlier_exclusion.sql").read_text(encoding="utf-8")
    jinja2.Environment(extensions=["jinja2.ext.do"]).parse(outlier)  # a valid macro, ready to review
    assert "{% macro rule__outlier_exclusion(metric, q) %}" in outlier
    assert '{%- if metric == "avg_delivery_days" %}\n  {% do q.where.append("delivery_days <= 60") %}' in outlier
    assert "on_time_delivery_rate: build failed" in outlier and "delivery_dayz" not in outlier.split("-#}")[1]
    assert "modifies: [avg_delivery_days]" in outlier
    sp = (out / "sao_paulo_approval_clock.sql").read_text(encoding="utf-8")
    assert "applies_when: {customer_state: SP}" in sp and "q.columns.update" in sp
    # the project is as it was: no temporary models or macros, the same manifest, no verification tables
    assert not list(root.glob("**/dptool_link_tmp"))
    assert built_demo_copy.manifest_path.read_bytes() == manifest_before
    assert "rule__outlier_exclusion" in (root / "macros" / "ecommerce" / "rule__outlier_exclusion.sql").read_text()
    con = duckdb.connect(str(root / "dptool_demo.duckdb"), read_only=True)
    try:
        schemas = {r[0] for r in con.execute("select schema_name from information_schema.schemata").fetchall()}
    finally:
        con.close()
    assert "dptool_link" not in schemas
