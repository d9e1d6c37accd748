"""The pages a reviewer reads, as headless Chromium renders them: a gold model's dbt docs page, the overview
`dptool_tasks`, a data product's page and one of its derived columns expanded, report.html's wrong answers, the
graph page and compare.html (base-sql against gold-sql).

Each reader returns what the page shows (innerText: hidden elements are left out) and, given a folder, takes its
screenshot. tests/test_browser.py and tests/test_compare_page.py assert on what they read; `make docs-check`
(`python -m tests.docs_pages`) runs them on the demo after `dbt docs generate --select '*' --vars
'{dptool_gold: true}'` and writes the screenshots to target/docs-check/img (`make docs-images`: docs/img, the
pictures of the README and the docs pages).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from tests.browser import Browser, serve

PROJECT = "dptool_demo"
DATA_PRODUCT_MODEL = "dp_seller_scorecard"  # a data product of several tables, with a derived column through a join
DERIVED_COLUMN = "freight_to_price_ratio"
APP = ".app-scroll"


def rule_task(tasks: list[dict]) -> dict:
    """The task whose page is shown: the first with rule-modified gold SQL and the most rules (at most 2: the
    page stays short enough to read)."""
    with_rules = [t for t in tasks if t.get("gold_sql") and t["rule_ids"]]
    return max(with_rules, key=lambda t: min(len(t["rule_ids"]), 2))


def wrong_rule_task(results: list[dict], tasks: dict[str, dict]) -> dict:
    """A wrong answer worth showing: a rule task answered with a value that is not the gold (not "no answer"),
    whose gold and answer are short enough to be shown whole."""
    for r in results:
        task = tasks[r["task_id"]]
        if (not r["correct"] and r.get("answer") is not None and task["rule_ids"] and task.get("gold_sql")
                and len(json.dumps(r["answer"])) < 400 and len(json.dumps(task["gold"])) < 400):
            return r
    raise AssertionError("no wrong rule task answered with a value in the score")


class Docs:
    """dbt docs (a served target/) in one browser: opens a node's page, reads and photographs its sections."""

    def __init__(self, browser: Browser, base: str):
        self.browser, self.base = browser, base

    def open(self, unique_id: str) -> None:
        kind, name = unique_id.split(".")[0], unique_id.rsplit(".", 1)[-1]
        # the app swaps pages in place: ready when the title names this node and its sections are drawn
        ready = (f"(() => {{ const t = document.querySelector('{APP} .app-title h1 .break');"
                 f" return t && t.innerText.trim() === {json.dumps(name)}"
                 " && !!document.querySelector('#description') && !!document.querySelector('.app-details h6'); })()")
        self.browser.goto(f"{self.base}#!/{kind}/{unique_id}", ready, unique_id)
        # the lineage graph's round button floats over the content (fixed at the window's corner): not in a photo
        self.browser.evaluate("document.querySelectorAll('.launcher').forEach(e => e.style.visibility = 'hidden')")

    def section(self, target: str) -> str:
        """The selector of a page section by its anchor (details, description, columns, depends_on, code)."""
        return f"section:has(> #{target})"

    def text(self, target: str) -> str:
        return self.browser.text(self.section(target))


def gold_page(docs: Docs, task: dict, shots: Path | None = None) -> SimpleNamespace:
    """A task's gold model: its description (question, metric, the reviewer's fields as table rows, rule
    documents, and what of it runs past the section's edge) and, in "Depends On", the models and the macros it
    depends on (the Macros tab shows only after a click)."""
    b = docs.browser
    docs.open(task["dbt_node"])
    title = b.text(f"{APP} .app-title")
    description = docs.text("description")
    section = json.dumps(docs.section("description"))
    # the fields a reviewer checks, a table row each; and what of the description runs past its section's edge
    # (the first table whose head is "field | value": a rule document below may hold tables of its own)
    fields = b.evaluate(f"(t => t ? [...t.rows].slice(1).map(tr => [...tr.cells].map(td => td.innerText.trim())) : [])"
                        f"([...document.querySelectorAll({section} + ' table')].find(t => t.rows[0] && "
                        "[...t.rows[0].cells].map(c => c.textContent.trim()).join('|') === 'field|value'))")
    cut = b.evaluate(f"(s => {{ const edge = s.getBoundingClientRect().right; return [...s.querySelectorAll('*')]"
                     ".filter(e => e.getBoundingClientRect().right > edge + 1)"
                     f".map(e => e.tagName + ': ' + e.innerText.slice(0, 60)); }})(document.querySelector({section}))")
    depends = docs.section("depends_on")
    tabs = b.evaluate(f"[...document.querySelectorAll('{depends} .nav-tabs a')].map(a => a.innerText.trim())")
    models = b.text(f"{depends} .list-unstyled")
    macros = ""
    if "Macros" in tabs:
        b.evaluate(f"[...document.querySelectorAll('{depends} .nav-tabs a')]"
                   ".find(a => a.innerText.trim() === 'Macros').click()")
        b.wait_for(f"document.querySelector('{depends} .nav-tabs li.active').innerText.trim() === 'Macros'",
                   "the Macros tab of Depends On")
        macros = b.text(f"{depends} .list-unstyled")
    if shots:
        b.screenshot(shots / "gold-model.png", f"{APP} .app-title", until=docs.section("description"),
                     max_height=900)
        b.screenshot(shots / "gold-model-macros.png", depends)
    return SimpleNamespace(title=title, description=description, tabs=tabs, models=models, macros=macros,
                           fields=dict(row for row in fields if len(row) == 2), cut=cut)


def tasks_page(docs: Docs, shots: Path | None = None) -> SimpleNamespace:
    """The overview model dptool_tasks: every task with its question, linked."""
    b = docs.browser
    docs.open(f"model.{PROJECT}.dptool_tasks")
    description = docs.text("description")
    links = b.evaluate(f"[...document.querySelectorAll('{docs.section('description')} a')]"
                       ".map(a => a.getAttribute('href'))")
    if shots:
        b.screenshot(shots / "dptool-tasks.png", f"{APP} .app-title", until=docs.section("description"),
                     max_height=700)
    return SimpleNamespace(description=description, links=links)


def data_product_page(docs: Docs, model: str = DATA_PRODUCT_MODEL, column: str = DERIVED_COLUMN,
                      shots: Path | None = None) -> SimpleNamespace:
    """A data product model: its description (the request and the questions), and one derived column, collapsed
    (one raw line) and expanded (rendered) after a click on its row, and which of the expanded paragraphs run past
    the panel's edge."""
    b = docs.browser
    docs.open(f"model.{PROJECT}.{model}")
    description = docs.text("description")
    row = (f"[...document.querySelectorAll('{docs.section('columns')} tr.column-row')]"
           f".find(r => r.querySelector('td').innerText.trim() === {json.dumps(column)})")
    found = b.evaluate(f"(r => r ? (r.setAttribute('data-dptool', 'row'),"
                       " r.nextElementSibling.setAttribute('data-dptool', 'expanded'),"
                       f" r.closest('table').parentElement.setAttribute('data-dptool', 'panel'), true) : false)({row})")
    if not found:
        raise AssertionError(f"{model}: no row for column {column} in Columns")
    collapsed = b.text("[data-dptool=row]")
    b.click("[data-dptool=row]")
    b.wait_for("document.querySelector('[data-dptool=expanded]').offsetParent !== null", f"{column} expanded")
    expanded = b.text("[data-dptool=expanded]")
    code = b.evaluate("[...document.querySelectorAll('[data-dptool=expanded] pre')].map(p => p.innerText)")
    # the panel scrolls sideways: what runs past its right edge is not seen without scrolling
    cut = b.evaluate("(() => { const edge = document.querySelector('[data-dptool=panel]')"
                     ".getBoundingClientRect().right; return [...document.querySelectorAll('[data-dptool=expanded] p')]"
                     ".filter(p => p.getBoundingClientRect().right > edge + 1).map(p => p.innerText); })()")
    if shots:
        # the columns table scrolls inside its panel (800 px at most): scrolled to the column, as a reader would
        b.evaluate("document.querySelector('[data-dptool=panel]').scrollTop ="
                   " document.querySelector('[data-dptool=row]').offsetTop")
        b.screenshot(shots / "data-product.png", f"{APP} .app-title", until=docs.section("description"),
                     max_height=1000)
        b.screenshot(shots / "derived-column.png", "[data-dptool=row]", until="[data-dptool=expanded]",
                     within="[data-dptool=panel]", max_height=1000)
    return SimpleNamespace(description=description, collapsed=collapsed, expanded=expanded, code=code, cut=cut)


def report_page(browser: Browser, report: Path, task_id: str, shots: Path | None = None) -> SimpleNamespace:
    """report.html: its headings; the wrong answers filtered to one task's class (how many cards, drawn and in all),
    then to the task itself: its card's question, class, rules in force, expected, rule-free and given answers."""
    browser.goto(report.resolve().as_uri(), "document.querySelector('#wrong-count')?.textContent", str(report))
    headings = browser.evaluate("[...document.querySelectorAll('h2')].map(h => h.innerText)")
    drawn_at_first = browser.evaluate("document.querySelectorAll('article.wrong').length")
    failure = browser.evaluate("JSON.parse(document.getElementById('wrong-data').textContent)"
                               f".find(c => c.id === {json.dumps(task_id)}).failure")

    def choose(key: str, value: str) -> None:
        browser.evaluate(f"(i => {{ i.value = {json.dumps(value)}; i.dispatchEvent(new Event('input')); }})"
                         f"(document.querySelector('#wrong [data-key={key}]'))")

    choose("failure", failure)
    filtered = SimpleNamespace(count=browser.text("#wrong-count"),
                               classes=browser.evaluate("[...document.querySelectorAll('article.wrong p.failure')]"
                                                        ".map(p => p.innerText)"))
    if shots:
        browser.screenshot(shots / "report-top.png", "h1", until="section.charts > svg", max_height=500)
        browser.screenshot(shots / "report-filtered.png", "#wrong", max_height=900)
    choose("text", task_id)
    card = f"article.wrong[data-task={json.dumps(task_id)}]"
    if not browser.evaluate(f"document.querySelector({json.dumps(card)}) !== null"):
        raise AssertionError(f"{report}: no wrong answer {task_id}")
    browser.evaluate(f"document.querySelector({json.dumps(card)}).setAttribute('data-dptool', 'wrong')")

    def cell(cls: str) -> str | None:
        return browser.evaluate(f"(p => p ? p.innerText : null)(document.querySelector('[data-dptool=wrong] "
                                f"td.{cls} pre'))")

    if shots:
        browser.screenshot(shots / "report-wrong-answer.png", "[data-dptool=wrong]")
    card_text = {name: browser.text(f"[data-dptool=wrong] p.{name}") for name in ("q", "no", "failure", "rules")}
    return SimpleNamespace(headings=headings, question=card_text["q"], reason=card_text["no"],
                           failure=card_text["failure"], rules=card_text["rules"], expected=cell("expected"),
                           base=cell("base"), given=cell("given"), filtered=filtered, drawn_at_first=drawn_at_first)


GRAPH_WINDOW = (1400, 900)
# every visible edge sampled at 40 points (ends left out: they touch their own label's end and the next dot), and
# each point tested against the box of every label
GRAPH_LAYOUT = """(() => {
    const svg = document.querySelector('svg');
    const labels = [...svg.querySelectorAll('text.label')].map(t => t.getBBox());
    const edges = [...svg.querySelectorAll('path.edge')].filter(p => getComputedStyle(p).display !== 'none');
    const crossing = [];
    for (const p of edges) {
        const length = p.getTotalLength();
        for (let i = 1; i < 40; i++) {
            const q = p.getPointAtLength(length * i / 40);
            const hit = labels.find(b => q.x > b.x + 1 && q.x < b.x + b.width - 1 && q.y > b.y + 1
                                        && q.y < b.y + b.height - 1);
            if (hit) { crossing.push(p.querySelector('title').textContent); break; }
        }
    }
    return {edges: edges.length, crossing: crossing,
            overflow: document.documentElement.scrollWidth - window.innerWidth};
})()"""


def graph_page(browser: Browser, page: Path, shots: Path | None = None) -> SimpleNamespace:
    """`dptool graph --format html`'s page at 1,400 px: how far it overflows the window, and which visible edges
    cross a label, with the metric -> table edges hidden (as it opens) and shown (its checkbox clicked)."""
    browser.goto(page.resolve().as_uri(), "document.querySelector('svg text.label') !== null", "the graph page")
    collapsed = browser.evaluate(GRAPH_LAYOUT)
    if shots is not None:
        browser.screenshot(shots / "graph.png", "body", max_height=1600)
    browser.click("#metric-tables")
    expanded = browser.evaluate(GRAPH_LAYOUT)
    return SimpleNamespace(collapsed=collapsed, expanded=expanded)


COMPARE_WINDOW = (1400, 900)
# how far the page runs past the window, and every id or word drawn on more than one line: each `.id` element's
# client rects, and each word of each text node (a range over it) on more than one line top
COMPARE_LAYOUT = """(() => {
    const broken = [];
    for (const e of document.querySelectorAll('.id'))
        if (new Set([...e.getClientRects()].map(r => Math.round(r.top))).size > 1) broken.push(e.textContent);
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT,
        {acceptNode: n => n.parentElement.closest('script, style, svg') ? NodeFilter.FILTER_REJECT
                                                                         : NodeFilter.FILTER_ACCEPT});
    const range = document.createRange();
    let words = 0;
    for (let n; (n = walker.nextNode());) {
        for (const m of n.textContent.matchAll(/\\S+/g)) {
            range.setStart(n, m.index); range.setEnd(n, m.index + m[0].length);
            const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
            if (tops.size) words++;
            if (tops.size > 1) broken.push(m[0]);
        }
    }
    const past = [...document.body.querySelectorAll('*')].filter(e => {
        const box = e.getBoundingClientRect(); return box.width && box.right > window.innerWidth + 0.5;
    }).map(e => e.tagName + ': ' + (e.textContent || '').slice(0, 40));
    return {broken: broken, words: words, ids: document.querySelectorAll('.id').length, past: past,
            overflow: document.documentElement.scrollWidth - window.innerWidth};
})()"""


def compare_page(browser: Browser, page: Path, shots: Path | None = None) -> SimpleNamespace:
    """compare.html at 1,400 px: its layout (COMPARE_LAYOUT) as it opens, and with the list of the flipped tasks
    opened from the summary's first count (the tasks drawn, and the count and group the button names); photographed
    at the top (the leaderboard) and at the flips' summary with a count opened."""
    browser.goto(page.resolve().as_uri(), "document.querySelector('#flip-count')?.textContent", str(page))
    first = browser.evaluate(COMPARE_LAYOUT)
    if shots is not None:
        browser.screenshot(shots / "compare-top.png", "h1", until="#leaderboard", max_height=900)
    group = browser.evaluate("(b => ({...b.dataset, n: Number(b.innerText)}))(document.querySelector('button.open'))")
    browser.click("button.open")
    opened = SimpleNamespace(
        group=group, count=browser.text("#flip-count"),
        tasks=browser.evaluate("[...document.querySelectorAll('#flip-cards tr')].map(tr => tr.dataset.task)"),
        layout=browser.evaluate(COMPARE_LAYOUT))
    if shots is not None:
        browser.screenshot(shots / "compare-flips.png", "#flips", max_height=1100)
    return SimpleNamespace(first=first, opened=opened)


def main(argv: list[str] | None = None) -> int:
    """make docs-check: dbt docs of the whole demo, a base-sql score run, its compare with gold-sql, the pages
    read and photographed."""
    from dptool.project.dbt import DbtProject

    parser = argparse.ArgumentParser(prog="python -m tests.docs_pages", description=main.__doc__)
    parser.add_argument("--project-dir", default=".", type=Path)
    parser.add_argument("--bundle", default="bundle", type=Path)
    parser.add_argument("--out", default="docs/img", type=Path, help="folder of the screenshots")
    args = parser.parse_args(argv)
    started = time.monotonic()

    def step(what: str) -> None:
        print(f"docs-check: {what} ({time.monotonic() - started:.0f} s)", flush=True)

    project = DbtProject(args.project_dir)
    step("dbt docs generate --select '*' --vars '{dptool_gold: true}'")
    project.run("docs", "generate", "--select", "*", gold=True)
    work = project.project_dir / "target" / "docs-check"
    work.mkdir(parents=True, exist_ok=True)
    for command in (("answer", str(args.bundle), "--agent", "base-sql", "--out", str(work / "base-sql.jsonl")),
                    ("score", str(args.bundle), str(work / "base-sql.jsonl"), "--out", str(work / "score")),
                    ("answer", str(args.bundle), "--agent", "gold-sql", "--out", str(work / "gold-sql.jsonl")),
                    ("compare", str(work / "base-sql.jsonl"), str(work / "gold-sql.jsonl"), "--bundle",
                     str(args.bundle), "--out", str(work / "compare")),
                    ("graph", "--project-dir", str(project.project_dir), "--format", "html", "--out",
                     str(work / "graph.html"))):
        step(f"dptool {command[0]} ({' '.join(command[1:])})")
        subprocess.run([sys.executable, "-m", "dptool.cli", *command], check=True, stdout=subprocess.DEVNULL)
    tasks = [json.loads(line) for line in (args.bundle / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    score = json.loads((work / "score" / "score.json").read_text(encoding="utf-8"))
    wrong = wrong_rule_task(score["results"], {t["task_id"]: t for t in tasks})
    args.out.mkdir(parents=True, exist_ok=True)
    step("chromium")
    with Browser() as browser, serve(project.project_dir / "target") as base:  # forked before the server thread
        docs = Docs(browser, base)
        task = rule_task(tasks)
        gold = gold_page(docs, task, args.out)
        tasks_page(docs, args.out)
        product = data_product_page(docs, shots=args.out)
        report = report_page(browser, work / "score" / "report.html", wrong["task_id"], args.out)
    with Browser(window=GRAPH_WINDOW) as browser:
        graph = graph_page(browser, work / "graph.html", args.out)
    with Browser(window=COMPARE_WINDOW) as browser:
        compared = compare_page(browser, work / "compare" / "compare.html", args.out)
    problems = [what for what, ok in [
        (f"{task['task_id']}: the question", task["question"] in gold.description),
        (f"{task['task_id']}: the reviewer's fields, a row each", gold.fields.get("analysis type") ==
         task["analysis_type"] and "gold answer" in gold.fields and "support" in gold.fields),
        (f"{task['task_id']}: nothing past the description's edge", not gold.cut),
        (f"{task['task_id']}: the rule macros among Depends On",
         all(f"rule__{r}" in gold.macros for r in task["rule_ids"])),
        (f"{DATA_PRODUCT_MODEL}: the request", "Data product request" in product.description),
        (f"{DERIVED_COLUMN}: the provenance, expanded", "Provenance: derived" in product.expanded),
        (f"report.html: {wrong['task_id']}'s question", report.question == wrong["question"]),
        ("graph.html: within 1,400 px", graph.expanded["overflow"] <= 0),
        ("graph.html: no edge across a label", not graph.collapsed["crossing"] + graph.expanded["crossing"]),
        ("compare.html: within 1,400 px", compared.first["overflow"] <= 0 and not compared.first["past"]),
        ("compare.html: no id or word cut", not compared.first["broken"] + compared.opened.layout["broken"]),
        ("compare.html: a count lists its tasks", len(compared.opened.tasks) == min(compared.opened.group["n"], 50)),
    ] if not ok]
    for png in sorted(args.out.glob("*.png")):
        print(f"  {png} {png.stat().st_size // 1024} KB")
    step("done" if not problems else "NOT SHOWN: " + "; ".join(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
