"""What a reviewer reads, in a real browser: headless Chromium (Debian's `chromium`) renders dbt docs of the demo
(a gold model, the overview `dptool_tasks`, a data product and one of its derived columns) and report.html of a
base-sql score run, and the tests assert on what the pages show (innerText: nothing hidden counts).

One `dbt docs generate` of the three models on the session's demo project (after `dptool generate`: the gold models
exist), one score run on a few tasks of the session's bundle, one Chromium for every page. Without Chromium the
module skips, unless DPTOOL_REQUIRE_CHROMIUM=1 (.ci/run), where it fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import browser, docs_pages
from tests.conftest import run_cli
from tests.docs_pages import DATA_PRODUCT_MODEL, DERIVED_COLUMN, PROJECT


@pytest.fixture(scope="module")
def chromium() -> str:
    return browser.chromium_or_skip()


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def scored(demo_bundle, tmp_path_factory) -> SimpleNamespace:
    """`dptool answer --agent base-sql` and `dptool score` on the bundle cut to its first rule task with a value
    and with a verdict (base-sql answers them with the query without the rules: wrong)."""
    bundle = demo_bundle[0]
    small = tmp_path_factory.mktemp("browser") / "bundle"
    small.mkdir()
    first: dict[str, dict] = {}
    for task in _jsonl(bundle / "tasks.jsonl"):
        if task["rule_ids"] and task.get("gold_sql") and task["analysis_type"] in ("point_query", "threshold_crossing"):
            first.setdefault(task["analysis_type"], task)
    (small / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in first.values()), encoding="utf-8")
    for name in ("warehouse.duckdb", "kb"):
        (small / name).symlink_to(bundle / name)
    answers, out = small.parent / "base-sql.jsonl", small.parent / "score"
    for args in (("answer", str(small), "--agent", "base-sql", "--out", str(answers)),
                 ("score", str(small), str(answers), "--out", str(out))):
        proc = run_cli(*args)
        assert proc.returncode == 0, proc.stderr
    return SimpleNamespace(tasks={t["task_id"]: t for t in first.values()},
                           answers={a["task_id"]: a["answer"] for a in _jsonl(answers)},
                           score=json.loads((out / "score.json").read_text(encoding="utf-8")),
                           report=out / "report.html")


@pytest.fixture(scope="module")
def pages(chromium, demo_bundle, demo_project, scored) -> SimpleNamespace:
    task = docs_pages.rule_task(_jsonl(demo_bundle[0] / "tasks.jsonl"))
    # the three pages only, and no catalog (what they show comes from the manifest): seconds, where `--select '*'`
    # takes a minute (make docs-check generates everything). Not --no-compile: then dbt writes no manifest.json,
    # and the one dptool generate left has the gold models' descriptions from before their questions.
    demo_project.run("docs", "generate", "--select", task["dbt_node"].rsplit(".", 1)[-1], "dptool_tasks",
                     DATA_PRODUCT_MODEL, "--empty-catalog", gold=True)
    target = demo_project.project_dir / "target"
    wrong = docs_pages.wrong_rule_task(scored.score["results"], scored.tasks)
    with browser.Browser() as chrome, browser.serve(target) as base:  # Chromium forked before the server thread
        docs = docs_pages.Docs(chrome, base)
        return SimpleNamespace(
            task=task, manifest=json.loads((target / "manifest.json").read_text(encoding="utf-8")),
            gold=docs_pages.gold_page(docs, task), overview=docs_pages.tasks_page(docs),
            product=docs_pages.data_product_page(docs), wrong=wrong,
            report=docs_pages.report_page(chrome, scored.report, wrong["task_id"]))


def test_a_gold_models_page_shows_its_question_rule_documents_and_rule_macros(pages):
    task, gold, macros = pages.task, pages.gold, pages.manifest["macros"]
    assert "This model is hidden" in gold.title  # docs: {show: false}, and still a page of its own
    assert task["question"] in gold.description
    for rule in task["rule_ids"]:
        macro = macros[f"macro.{PROJECT}.rule__{rule}"]
        heading = macro["description"].strip().splitlines()[0].lstrip("# ").strip()  # the document's own title
        assert f"Rule: {macro['meta']['dptool']['rule']['title']}" in gold.description
        assert f"Macro: rule__{rule}" in gold.description and heading in gold.description
    # dbt docs lists the macros a model depends on under "Depends On", in a Macros tab next to Models
    assert gold.tabs == ["Models", "Macros"]
    assert pages.manifest["nodes"][task["dbt_node"]]["depends_on"]["nodes"][0].rsplit(".", 1)[-1] in gold.models
    assert {f"rule__{r}" for r in task["rule_ids"]} <= set(gold.macros.split())


def test_a_gold_models_page_shows_the_fields_a_reviewer_checks_a_row_each_within_the_page(pages):
    task, fields = pages.task, pages.gold.fields
    assert list(fields) == ["analysis type", "rule scope", "rules in force", "withdrawn rule", "gold answer",
                            "tolerance", "support"]
    assert fields["analysis type"] == task["analysis_type"] and fields["rule scope"].startswith(task["rule_scope"])
    assert fields["rules in force"] == (", ".join(f"rule__{r}" for r in task["rules_in_force"]) or "none")
    gold = fields["gold answer"]
    assert "characters more in tasks.jsonl" in gold or json.loads(gold) == task["gold"]
    assert f"at least {task['support']['min_rows']} rows" in fields["support"]
    assert pages.gold.cut == []
    # the meta stays whole for machines
    node = pages.manifest["nodes"][task["dbt_node"]]
    assert node["config"]["meta"]["dptool"]["task"]["analysis_type"] == task["analysis_type"]


def test_the_overview_page_lists_every_task_with_its_question_and_links(pages):
    gold = [n for n in pages.manifest["nodes"].values() if n["resource_type"] == "model"
            and n["config"].get("group") == "dptool_gold" and n["name"] != "dptool_tasks"]
    assert len(gold) > 20
    lines = pages.overview.description.splitlines()
    for node in gold:
        assert any(line.startswith(node["name"] + "\t") for line in lines), node["name"]
    assert pages.task["question"] in pages.overview.description
    assert f"#!/model/{pages.task['dbt_node']}" in pages.overview.links
    assert {f"#!/macro/macro.{PROJECT}.rule__{r}" for r in pages.task["rule_ids"]} <= set(pages.overview.links)


def test_a_data_products_page_shows_its_request_and_questions(pages):
    node = pages.manifest["nodes"][f"model.{PROJECT}.{DATA_PRODUCT_MODEL}"]
    product = node["config"]["meta"]["dptool"]["data_product"]
    text = pages.product.description
    assert product["request"] in text and len(product["questions"]) >= 2
    assert all(q["question"] in text for q in product["questions"])
    assert not [mark for mark in ("###", "```", "**") if mark in text]  # rendered, not raw markdown


def test_a_derived_column_shows_its_provenance_collapsed_and_expanded(pages):
    node = pages.manifest["nodes"][f"model.{PROJECT}.{DATA_PRODUCT_MODEL}"]
    provenance = node["config"]["meta"]["dptool"]["column_provenance"][DERIVED_COLUMN]
    assert provenance["derived"]
    sources = [e["source"] for e in provenance["edges"]]
    # collapsed: one line of plain sentences, nothing of markdown
    assert "Provenance: derived" in pages.product.collapsed and "```" not in pages.product.collapsed
    # expanded: the sentences, the expression and the provenance query as code
    assert "Provenance: derived" in pages.product.expanded and all(s in pages.product.expanded for s in sources)
    assert provenance["expression"] in pages.product.code[0]
    assert pages.product.code[1].lstrip().upper().startswith(("SELECT", "WITH"))


def test_a_derived_columns_provenance_is_not_cut_at_the_panels_edge(pages):
    assert not pages.product.cut


def test_report_shows_a_wrong_answers_question_gold_and_given_answer(pages, scored):
    wrong = [r for r in scored.score["results"] if not r["correct"]]
    assert f"Wrong answers ({len(wrong)})" in pages.report.headings
    task = scored.tasks[pages.wrong["task_id"]]
    assert pages.report.question == task["question"]
    assert json.loads(pages.report.expected) == task["gold"]
    assert json.loads(pages.report.given) == scored.answers[task["task_id"]] != task["gold"]
    # the card says why, what the gold applies and what the answer is without the rules
    result = next(r for r in scored.score["results"] if r["task_id"] == task["task_id"])
    assert pages.report.failure == result["failure"] and result["failure"]
    assert pages.report.rules.endswith("rules in force: " + ", ".join(task["rules_in_force"]))
    assert json.loads(pages.report.base) == task["base"]
    # filtered to its class, every card drawn is of that class
    assert pages.report.filtered.classes and set(pages.report.filtered.classes) == {result["failure"]}


def test_the_graph_page_fits_1400_px_and_no_edge_crosses_a_label(chromium, demo_catalog, tmp_path):
    from dptool.generate.graph import build_graph
    from dptool.generate.graph_draw import draw_html

    page = tmp_path / "graph.html"
    page.write_text(draw_html(build_graph(demo_catalog), "demo"), encoding="utf-8")
    with browser.Browser(window=docs_pages.GRAPH_WINDOW) as chrome:
        seen = docs_pages.graph_page(chrome, page, tmp_path)
    assert seen.collapsed["overflow"] <= 0 and seen.expanded["overflow"] <= 0
    assert seen.collapsed["crossing"] == [] and seen.expanded["crossing"] == []
    # the metric -> table layer is folded away until asked for, then every edge is drawn
    assert 0 < seen.collapsed["edges"] < seen.expanded["edges"]


def test_a_report_of_a_thousand_wrong_answers_stays_light_and_filters(chromium, tmp_path):
    """1,000 wrong answers on 20 metrics and 10 rules: the page is a few hundred KB, draws 50 cards, and a filter by
    metric and by rule draws exactly the matching ones."""
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    tasks = [{"task_id": f"pq_{i:04d}", "domain": "shop", "analysis_type": "point_query",
              "tier": "knowledge+analytics+rule", "question": f"What was metric {i % 20} in month {i}?",
              "answer_format": {"type": "value", "format": "number"}, "gold": {"value": 100.0 + i},
              "base": {"value": 200.0 + i}, "tolerance": {"rel_tol": 0.001}, "metric_ids": [f"m{i % 20}"],
              "rule_ids": [f"r{i % 10}"], "rules_in_force": [f"r{i % 10}"], "rule_types": ["exclusionary"]}
             for i in range(1000)]
    (bundle / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"task_id": t["task_id"], "answer": t["base"] if i % 2 else {"value": 1}})
                               + "\n" for i, t in enumerate(tasks)), encoding="utf-8")
    proc = run_cli("score", str(bundle), str(answers), "--out", str(tmp_path / "score"))
    assert proc.returncode == 0, proc.stderr
    report = tmp_path / "score" / "report.html"
    assert report.stat().st_size < 1_000_000
    with browser.Browser() as chrome:
        chrome.goto(report.as_uri(), "document.querySelector('#wrong-count')?.textContent", "report.html")
        assert chrome.evaluate("document.querySelectorAll('article.wrong').length") == 50
        assert chrome.text("#wrong-count") == "showing 50 of 1000"
        chrome.evaluate("(s => { s.value = 'm3'; s.dispatchEvent(new Event('input')); })"
                        "(document.querySelector('#wrong [data-key=metric]'))")
        chrome.evaluate("(s => { s.value = 'r3'; s.dispatchEvent(new Event('input')); })"
                        "(document.querySelector('#wrong [data-key=rules]'))")
        ids = chrome.evaluate("[...document.querySelectorAll('article.wrong')].map(a => a.dataset.task)")
        assert ids == [t["task_id"] for t in tasks if t["metric_ids"] == ["m3"] and t["rule_ids"] == ["r3"]][:50]
        assert ids and chrome.text("#wrong-count") == f"showing {len(ids)} of {len(ids)} (filtered from 1000)"
        classes = chrome.evaluate("[...document.querySelectorAll('article.wrong p.failure')].map(p => p.innerText)")
        assert set(classes) == {"rules not applied"}  # m3 and r3 are odd: answered with the base
