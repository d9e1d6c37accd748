"""`dptool compare` (issue 25 item 4): the reference runs of the demo bundle ranked gold-sql, base-sql, empty with
intervals, base-sql's rule-tier misses "rules not applied" (on a counterfactual "withdrawn rule still applied"),
runs of another bundle refused, flips between neighbours of the ranking (a flaky task is no flip), and
compare.html read in headless Chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from dptool.bundle import fingerprint
from dptool.evaluate.failures import RULES_NOT_APPLIED, WITHDRAWN_APPLIED
from dptool.evaluate.reference import reference_records
from dptool.evaluate.score import load_tasks
from tests import browser
from tests.conftest import run_cli

RULE_TIER = "knowledge+analytics+rule"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(demo_bundle, tmp_path_factory) -> SimpleNamespace:
    """gold-sql, base-sql (one pass over the SQL) and empty answers of the demo bundle, and `dptool compare` of them
    given in the order empty, base-sql, gold-sql."""
    bundle = demo_bundle[0]
    folder = tmp_path_factory.mktemp("compare")
    fp = fingerprint(bundle)
    records = reference_records(bundle, ("gold-sql", "base-sql"))
    paths = {agent: write_jsonl(folder / f"{agent}.jsonl", [{**r, "bundle": fp} for r in records[agent]])
             for agent in records}
    paths["empty"] = write_jsonl(folder / "empty.jsonl", [])
    out = folder / "out"
    proc = run_cli("compare", str(paths["empty"]), str(paths["base-sql"]), str(paths["gold-sql"]), "--bundle",
                   str(bundle), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return SimpleNamespace(bundle=bundle, paths=paths, out=out, stdout=proc.stdout,
                           result=json.loads((out / "compare.json").read_text(encoding="utf-8")))


def test_the_leaderboard_ranks_gold_sql_base_sql_empty_with_intervals(runs):
    n = len(load_tasks(runs.bundle))
    board = runs.result["runs"]
    assert [r["name"] for r in board] == ["gold-sql", "base-sql", "empty"]
    gold, base, empty = (r["overall"] for r in board)
    assert (gold["accuracy"], empty["accuracy"]) == (1.0, 0.0) and 0 < base["accuracy"] < 1
    # Wilson at the edges: n of n is not 100-100 %, 0 of n not 0-0 %
    assert gold["ci95"][1] == 1.0 and 0.98 < gold["ci95"][0] < 1
    assert empty["ci95"][0] == 0.0 and 0 < empty["ci95"][1] < 0.02
    assert base["ci95"][0] < base["accuracy"] < base["ci95"][1]
    rows = [line for line in runs.stdout.splitlines() if re.match(r"\| [123] \|", line)]
    assert [row.split(" | ")[1] for row in rows] == ["gold-sql", "base-sql", "empty"]
    lo, hi = gold["ci95"]
    assert rows[0].startswith(f"| 1 | gold-sql | 100.0 % | {100 * lo:.1f}–{100 * hi:.1f} % | — | 1 | 100.0 % |")
    assert f"# Compare: 3 runs on {runs.bundle.name} (" in runs.stdout and f"{n} tasks" in runs.stdout
    md = (runs.out / "compare.md").read_text(encoding="utf-8")
    for heading in ("## By analysis type", "## By tier", "## By rule type", "## By domain", "## By metric",
                    "## By rule", "## Why answers were wrong", "## Flipped tasks"):
        assert heading in md


def test_base_sql_is_0_percent_on_the_rule_tier_and_each_miss_there_is_rules_not_applied(runs, tmp_path):
    base = next(r for r in runs.result["runs"] if r["name"] == "base-sql")
    tier = base["groups"]["by_tier"][RULE_TIER]
    assert tier["n"] > 0 and tier["correct"] == 0
    proc = run_cli("score", str(runs.bundle), str(runs.paths["base-sql"]), "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "score.json").read_text(encoding="utf-8"))
    misses = [r for r in report["results"] if r["tier"] == RULE_TIER]
    # a counterfactual's base applies every rule, the withdrawn one included
    counterfactual = sum(r["analysis_type"] == "counterfactual" for r in misses)
    assert len(misses) == tier["n"] and counterfactual
    assert {(r["analysis_type"] == "counterfactual", r["failure"]) for r in misses} == \
        {(False, RULES_NOT_APPLIED), (True, WITHDRAWN_APPLIED)}
    assert base["failures"][RULES_NOT_APPLIED] == tier["n"] - counterfactual
    assert base["failures"][WITHDRAWN_APPLIED] == counterfactual
    assert f"| rules not applied | — | {tier['n'] - counterfactual} (" in runs.stdout
    assert f"| withdrawn rule still applied | — | {counterfactual} (" in runs.stdout


def test_the_flips_between_neighbours_are_the_tasks_right_in_one_and_wrong_in_the_other(runs):
    gold_base, base_empty = runs.result["flips"]
    assert (gold_base["above"], gold_base["below"], base_empty["above"], base_empty["below"]) == \
        ("gold-sql", "base-sql", "base-sql", "empty")
    base = next(r for r in runs.result["runs"] if r["name"] == "base-sql")
    n = runs.result["tasks"]
    assert len(gold_base["right_above_only"]) == n - base["overall"]["correct"] and not gold_base["right_below_only"]
    assert len(base_empty["right_above_only"]) == base["overall"]["correct"] and not base_empty["right_below_only"]
    assert {t["failure"] for t in base_empty["right_above_only"]} == {"no answer"}


def test_runs_of_another_bundle_are_refused_in_one_line(runs, tmp_path):
    other = write_jsonl(tmp_path / "other.jsonl", [{"task_id": "x", "answer": 1, "bundle": "ab" * 32}])
    proc = run_cli("compare", str(runs.paths["gold-sql"]), str(other), "--bundle", str(runs.bundle),
                   "--out", str(tmp_path / "out"))
    assert proc.returncode == 1 and not (tmp_path / "out").exists()
    assert proc.stderr == (f"error: {other}: made on bundle {'ab' * 6}, not on {runs.bundle} "
                           f"({fingerprint(runs.bundle)[:12]}); compare runs of one bundle, or give its --bundle\n")
    folder = tmp_path / "run"
    folder.mkdir()
    write_jsonl(folder / "answers.jsonl", [])
    (folder / "run.json").write_text(json.dumps({"tasks_sha256": "cd" * 32, "epochs": 1}), encoding="utf-8")
    proc = run_cli("compare", str(folder), "--bundle", str(runs.bundle), "--out", str(tmp_path / "out"))
    assert proc.returncode == 1 and proc.stderr.startswith(f"error: {folder}: made on bundle {'cd' * 6}, not on ")


def test_compare_outputs_are_self_contained_and_byte_stable(runs, tmp_path):
    args = [str(runs.paths[a]) for a in ("gold-sql", "empty", "base-sql")]
    assert run_cli("compare", *args, "--bundle", str(runs.bundle), "--out", str(tmp_path)).returncode == 0
    for name in ("compare.json", "compare.md", "compare.html"):
        assert (tmp_path / name).read_bytes() == (runs.out / name).read_bytes(), name
    page = (runs.out / "compare.html").read_text(encoding="utf-8")
    # scripts inline only: the flipped tasks' data and the script that lists them
    assert set(re.findall(r"<script[^>]*>", page)) == {'<script type="application/json" id=flip-data>', "<script>"}
    assert " src=" not in page and " href=" not in page
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}


def test_a_flaky_task_is_no_flip_and_runs_of_k_attempts_rank_by_pass_at_1(tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    tasks = [{"task_id": f"t_{i}", "analysis_type": "point_query", "tier": "knowledge+analytics", "domain": "shop",
              "rule_types": [], "answer_format": {"type": "value"}, "gold": {"value": float(i)}} for i in range(3)]
    write_jsonl(bundle / "tasks.jsonl", tasks)
    # steady: t_0 and t_1 right twice, t_2 wrong twice (pass@1 4/6); flaky: t_0 right twice, t_1 once, t_2 right
    # twice (pass@1 5/6). Flaky ranks first; t_2 flips (right in flaky, wrong in steady), t_1 does not (right in
    # one of flaky's two attempts: flaky, not wrong); nothing is right in steady and wrong in flaky
    steady = write_jsonl(tmp_path / "steady.jsonl", [{"task_id": f"t_{i}", "attempt": a, "answer": i if i < 2 else 9}
                                                     for a in (1, 2) for i in range(3)])
    flaky = write_jsonl(tmp_path / "flaky.jsonl", [{"task_id": f"t_{i}", "attempt": a,
                                                    "answer": 9 if (i, a) == (1, 2) else i}
                                                   for a in (1, 2) for i in range(3)])
    proc = run_cli("compare", str(steady), str(flaky), "--bundle", str(bundle), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "out" / "compare.json").read_text(encoding="utf-8"))
    assert [(r["name"], r["epochs"], r["overall"]["accuracy"], r["overall"]["pass_hat_k"]) for r in result["runs"]] \
        == [("flaky", 2, 0.8333, 0.6667), ("steady", 2, 0.6667, 0.6667)]
    (flip,) = result["flips"]
    assert [t["task_id"] for t in flip["right_above_only"]] == ["t_2"] and flip["right_below_only"] == []
    assert "| 1 | flaky | 83.3 % |" in proc.stdout and "flaky → steady: 1 right in flaky only, 0 right in steady " \
        "only" in proc.stdout


# ---- compare.html in headless Chromium -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> str:
    return browser.chromium_or_skip()


def test_compare_html_shows_the_ranking_and_every_flipped_task_and_nothing_runs_past_its_panel(chromium, runs):
    with browser.Browser() as chrome:
        chrome.goto((runs.out / "compare.html").resolve().as_uri(), "document.readyState === 'complete'")
        board = chrome.evaluate("[...document.querySelectorAll('#leaderboard table tr')].slice(1)"
                                ".map(tr => [...tr.cells].map(td => td.innerText))")
        flips = chrome.evaluate("JSON.parse(document.getElementById('flip-data').textContent).map(c => c.id)")
        headings = chrome.evaluate("[...document.querySelectorAll('#flips > h3')].map(h => h.innerText)")
        past = chrome.evaluate("""(() => {
            const panel = document.body.getBoundingClientRect();
            return [...document.body.querySelectorAll('*')].filter(e => {
                const box = e.getBoundingClientRect();
                return box.width && (box.right > panel.right + 0.5 || box.left < panel.left - 0.5);
            }).map(e => e.tagName + ': ' + (e.innerText || '').slice(0, 40));
        })()""")
        scroll = chrome.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert [row[1] for row in board] == ["gold-sql", "base-sql", "empty"]
    gold = runs.result["runs"][0]["overall"]["ci95"]
    assert board[0][2:4] == ["100.0 %", f"{100 * gold[0]:.1f}–{100 * gold[1]:.1f} %"]
    expected = [t["task_id"] for flip in runs.result["flips"] for side in ("right_above_only", "right_below_only")
                for t in flip[side]]
    assert flips == expected and flips
    assert headings[0].startswith("gold-sql → base-sql: ") and len(headings) == 2
    assert past == [] and scroll
