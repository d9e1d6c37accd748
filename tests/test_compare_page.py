"""compare.html in headless Chromium at 1,400 px: no id or word drawn across two lines, nothing past the window's
edge, and the flipped tasks counted by direction, analysis type, metric and rules, each count opening exactly its
tasks, drawn 50 at a time on a compare of a thousand tasks.

Runs compared: gold-sql, base-sql and empty on the small bundle (tests/small_bundle.py), and two answers files on
bundles of 300 and 1,000 tasks with a real project's long ids, metric and rule names (tests/compare_runs.py). Without
Chromium the module skips, unless DPTOOL_REQUIRE_CHROMIUM=1, where it fails.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import browser, compare_runs, docs_pages
from tests.conftest import run_cli
from tests.small_bundle import write_bundle


@pytest.fixture(scope="module")
def chromium() -> str:
    return browser.chromium_or_skip()


def compare(out: Path, bundle: Path, *runs: Path) -> dict:
    proc = run_cli("compare", *map(str, runs), "--bundle", str(bundle), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "compare.json").read_text(encoding="utf-8"))


def many(folder: Path, n: int) -> tuple[Path, dict]:
    bundle, a, b = compare_runs.write(folder, n)
    return folder / "out" / "compare.html", compare(folder / "out", bundle, a, b)


def group_of(result: dict, group: dict) -> list[str]:
    """The task ids of one count of the summary (by analysis type, or by analysis type, metric and rules), from
    compare.json, in the bundle's order."""
    (flip,) = [f for f in result["flips"] if f"{f['above']} → {f['below']}" == group["pair"]]
    side = "right_above_only" if group["direction"] == "right → wrong" else "right_below_only"
    return [t["task_id"] for t in flip[side] if t["analysis_type"] == group["type"]
            and (t["metric"] or "—") == group.get("metric", t["metric"] or "—")
            and (", ".join(t["rule_ids"]) or "—") == group.get("rules", ", ".join(t["rule_ids"]) or "—")]


def assert_laid_out(layout: dict) -> None:
    assert layout["words"] > 100 and layout["ids"] > 0  # the measure saw the page
    assert layout["broken"] == [] and layout["past"] == [] and layout["overflow"] <= 0


def test_compare_of_real_runs_breaks_no_id_or_word_at_1400_px(chromium, tmp_path):
    bundle = write_bundle(tmp_path / "bundle")
    runs = []
    for agent in ("gold-sql", "base-sql", "empty"):
        runs.append(tmp_path / f"{agent}.jsonl")
        proc = run_cli("answer", str(bundle), "--agent", agent, "--out", str(runs[-1]))
        assert proc.returncode == 0, proc.stderr
    result = compare(tmp_path / "out", bundle, *runs)
    with browser.Browser(window=docs_pages.COMPARE_WINDOW) as chrome:
        seen = docs_pages.compare_page(chrome, tmp_path / "out" / "compare.html", tmp_path)
    assert_laid_out(seen.first)
    assert_laid_out(seen.opened.layout)
    # gold-sql -> base-sql: the rule task, right in gold-sql only; base-sql -> empty: the other task
    assert seen.opened.group == {"pair": "gold-sql → base-sql", "direction": "right → wrong", "type": "point_query",
                                 "n": 1}
    assert seen.opened.tasks == group_of(result, seen.opened.group) == ["t_0001"]
    assert (tmp_path / "compare-top.png").stat().st_size and (tmp_path / "compare-flips.png").stat().st_size


def test_every_count_of_the_summary_opens_exactly_its_tasks(chromium, tmp_path):
    page, result = many(tmp_path, 300)
    with browser.Browser(window=docs_pages.COMPARE_WINDOW) as chrome:
        seen = docs_pages.compare_page(chrome, page)
        assert_laid_out(seen.first)
        assert_laid_out(seen.opened.layout)
        # by direction and analysis type, each opening into its metric and rules; the counts add up to every flip
        # both ways, each group once, the largest first within a direction
        flips = [t for f in result["flips"] for side in ("right_above_only", "right_below_only") for t in f[side]]
        opens = "[...document.querySelectorAll('button.open')].map(b => ({...b.dataset, n: Number(b.innerText)}))"
        top = chrome.evaluate(opens)
        assert sum(g["n"] for g in top) == len(flips) and {g["direction"] for g in top} == \
            {"right → wrong", "wrong → right"}
        for direction in ("right → wrong", "wrong → right"):
            counts = [g["n"] for g in top if g["direction"] == direction]
            assert counts == sorted(counts, reverse=True)
        chrome.evaluate("document.querySelectorAll('button.groups').forEach(b => b.click())")
        assert_laid_out(chrome.evaluate(docs_pages.COMPARE_LAYOUT))
        groups = chrome.evaluate(opens)
        inner = [g for g in groups if "metric" in g]
        assert [g for g in groups if "metric" not in g] == top and sum(g["n"] for g in inner) == len(flips)
        keys = [(g["direction"], g["type"], g["metric"], g["rules"]) for g in inner]
        assert len(set(keys)) == len(keys) > len(top)
        for i, group in enumerate(groups):
            chrome.evaluate(f"document.querySelectorAll('button.open')[{i}].click()")
            shown = chrome.evaluate("[...document.querySelectorAll('#flip-cards tr')].map(tr => tr.dataset.task)")
            assert shown == group_of(result, group)[:50] and min(group["n"], 50) == len(shown), group
            assert chrome.text("#flip-count") == \
                f"showing {min(group['n'], 50)} of {group['n']} (filtered from {len(flips)})"
        # a row opened folds away again
        chrome.click("button.groups")
        first = [g for g in inner if (g["direction"], g["type"]) == (top[0]["direction"], top[0]["type"])]
        assert len(chrome.evaluate(opens)) == len(groups) - len(first)


def test_a_compare_of_a_thousand_tasks_stays_light_and_draws_fifty_rows_at_a_time(chromium, tmp_path):
    page, result = many(tmp_path, 1000)
    flips = sum(len(f[side]) for f in result["flips"] for side in ("right_above_only", "right_below_only"))
    assert flips > 250 and page.stat().st_size < 250_000
    with browser.Browser(window=docs_pages.COMPARE_WINDOW) as chrome:
        chrome.goto(page.as_uri(), "document.querySelector('#flip-count')?.textContent", "compare.html")
        assert chrome.evaluate("document.querySelectorAll('#flip-cards tr').length") == 50
        assert chrome.text("#flip-count") == f"showing 50 of {flips}"
        chrome.click("#flip-more")
        assert chrome.evaluate("document.querySelectorAll('#flip-cards tr').length") == 100
        chrome.evaluate("(i => { i.value = 'dec_001ea530'; i.dispatchEvent(new Event('input')); })"
                        "(document.querySelector('#flip [data-key=text]'))")
        assert chrome.evaluate("[...document.querySelectorAll('#flip-cards tr')].map(tr => tr.dataset.task)") == \
            ["dec_001ea530"]
        assert_laid_out(chrome.evaluate(docs_pages.COMPARE_LAYOUT))


def test_ids_that_look_like_markup_are_shown_as_text(chromium, tmp_path):
    """A task id, metric and rule holding markup and quotes: in the summary's data and the list, text, never
    markup."""
    hostile = '<img src=x onerror="document.title=1">'
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    tasks = [{**compare_runs.task(i), "task_id": f"{hostile}{i}", "metric_ids": [f'm"{hostile}'],
              "rule_ids": [f"r'{hostile}"], "rules_in_force": [f"r'{hostile}"]} for i in range(4)]
    (bundle / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    runs = []
    for name, right in (("a", (0, 1, 2)), ("b", (3,))):
        runs.append(tmp_path / f"{name}.jsonl")
        runs[-1].write_text("".join(json.dumps({"task_id": t["task_id"], "answer": t["gold"] if i in right else 0})
                                    + "\n" for i, t in enumerate(tasks)), encoding="utf-8")
    compare(tmp_path / "out", bundle, *runs)
    with browser.Browser(window=docs_pages.COMPARE_WINDOW) as chrome:
        seen = docs_pages.compare_page(chrome, tmp_path / "out" / "compare.html")
        chrome.evaluate("document.querySelectorAll('button.groups').forEach(b => b.click())")
        chrome.evaluate("document.querySelectorAll('tr.sub button.open')[0].click()")
        shown = chrome.evaluate("[...document.querySelectorAll('#flip-cards tr')].map(tr => tr.cells[2].innerText)")
        assert chrome.evaluate("document.querySelectorAll('img').length") == 0
        assert chrome.evaluate("document.title").startswith("Compare: ")
    assert shown and all(s.startswith(hostile) for s in shown)
    assert seen.opened.tasks and all(t.startswith(hostile) for t in seen.opened.tasks)
