"""Score reports: score.json, score.md and report.html (self-contained: inline SVG, no CDN; a little inline script
pages and filters the wrong answers, whose cards are data in the page, so a run of a thousand tasks stays light)."""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

from dptool.evaluate.failures import NAMED, definition
from dptool.evaluate.score import TIERS
from dptool.files.jsontext import dumps, plain
from dptool.outdir import write_files

GROUPS = (("by_analysis_type", "By analysis type"), ("by_tier", "By tier"), ("by_rule_type", "By rule type"),
          ("by_domain", "By domain"))
# the team's own question: which of its metrics and policies the agent gets wrong, and how
TEAM_GROUPS = (("by_metric", "By metric"), ("by_rule", "By rule"))
ACCENT, TRACK, INK, MUTED = "#2f6fb3", "#e6ebf1", "#1d2733", "#6b7785"
FONT = "system-ui, -apple-system, Segoe UI, sans-serif"


def pct(accuracy: float | None) -> str:
    return "—" if accuracy is None else f"{100 * accuracy:.1f} %"


REPORT_FILES = ("score.json", "score.md", "report.html")


def write_reports(report: dict, out: str | Path, title: str) -> list[Path]:
    """Write score.json, score.md and report.html into `out`; byte-stable for the same report. Each is written as
    dptool.outdir writes files: a report of the user's there is refused, never overwritten."""
    files = {"score.json": dumps({"title": title, **report}, levels=4) + "\n", "score.md": markdown(report, title),
             "report.html": html(report, title)}
    return write_files(out, files)


def interval(cell: dict, key: str = "ci95") -> str:
    """A cell's 95 % interval as "20.8–93.9 %" (— without tasks)."""
    ci = cell.get(key)
    return "—" if not ci else f"{100 * ci[0]:.1f}–{100 * ci[1]:.1f} %"


def summary_lines(report: dict) -> list[str]:
    """The few lines a terminal shows: overall, accuracy by analysis type and tier with intervals, why wrong."""
    lines = headline(report)
    k = report.get("epochs", 1)
    for key, label in GROUPS[:2]:
        lines.append(f"{label.lower()}:")
        for name, c in report[key].items():
            line = f"  {name:<28} {c['correct']:>4} / {c.get('attempts', c['n']):<4} {pct(c['accuracy']):>8}  " \
                   f"[{interval(c)}]"
            if k > 1:
                line += f"  pass^{k} {pct(c['pass_hat_k'])}"
            lines.append(line)
    if report["reasons"]:
        lines.append("why wrong: " + ", ".join(f"{name} {n} ({pct(share)})" for name, n, share in failures(report)))
    line = without_rules_line(report)
    if line:
        lines.append(line)
    return lines


def without_rules_line(report: dict) -> str:
    """How many rule tasks an answer ignoring every rule gets right ("" when the run has no rule task)."""
    rule_tier = TIERS[-1]
    n = report.get("by_tier", {}).get(rule_tier, {}).get("n")
    if not n:
        return ""
    right = report.get("right_without_rules", {}).get(rule_tier, 0)
    return (f"{right} of {n} {rule_tier} tasks ({pct(right / n)}) are answered right by an answer that ignores "
            "every rule (their gold is their rule-free answer)")


def failure_cell(c: dict) -> str:
    """A group's dominant failure class and its count of wrong answers, "—" when none is wrong."""
    found = c.get("dominant_failure")
    return "—" if not found else f"{found[0]} ({found[1]})"


def class_definitions(names) -> list[tuple[str, str]]:
    """(class, one-line definition) of the failure classes named, the benchmark's own failures first."""
    ordered = sorted(set(names), key=lambda c: (c not in NAMED, NAMED.index(c) if c in NAMED else 0, c))
    return [(c, definition(c)) for c in ordered if definition(c)]


def failures(report: dict) -> list[tuple[str, int, float]]:
    """(class, wrong answers, share of the wrong answers), the most frequent first."""
    total = sum(report["reasons"].values())
    return [(name, n, n / total) for name, n in sorted(report["reasons"].items(), key=lambda kv: (-kv[1], kv[0]))]


def headline(report: dict) -> list[str]:
    """Accuracy over every task (a missing answer is wrong), then the coverage and the accuracy over the answered,
    the 95 % interval and, with k > 1 attempts, pass^k."""
    o, k = report["overall"], report.get("epochs", 1)
    answered = o["answered"]
    correct_answered = o["correct"]  # an unanswered attempt is never correct
    if k == 1:
        lines = [f"accuracy {pct(o['accuracy'])}: {o['correct']} of {o['n']} tasks correct, a task without an answer "
                 f"counting as wrong; scored against {report['against']}",
                 f"coverage {answered} of {o['n']} tasks answered ({pct(o.get('coverage'))}); accuracy over the "
                 f"answered {pct(o.get('accuracy_answered'))} ({correct_answered} of {answered})",
                 f"95 % interval {interval(o)} (Wilson score interval over {o['n']} tasks)"]
    else:
        lines = [f"accuracy (pass@1) {pct(o['accuracy'])}: {o['correct']} of {o['attempts']} attempts correct "
                 f"({o['n']} tasks × {k} attempts), an attempt without an answer counting as wrong; scored against "
                 f"{report['against']}",
                 f"coverage {answered} of {o['attempts']} attempts answered ({pct(o.get('coverage'))}); accuracy over "
                 f"the answered {pct(o.get('accuracy_answered'))} ({correct_answered} of {answered})",
                 f"95 % interval {interval(o)} (Wilson score interval of the mean pass rate over {o['n']} tasks)",
                 f"pass^{k} {pct(o['pass_hat_k'])}: {o['all_correct']} of {o['n']} tasks right in every attempt; "
                 f"95 % interval {interval(o, 'pass_hat_k_ci95')}"]
    return lines


def _sentence(line: str) -> str:
    return f"{line[0].upper()}{line[1:]}."


def group_header(k: int) -> tuple[list[str], list[str]]:
    """The columns of a group table: names, and markdown alignments."""
    names = ["tasks", "correct" if k == 1 else "correct attempts", "accuracy" if k == 1 else "pass@1",
             "95 % interval", *([f"pass^{k}", f"pass^{k} interval"] if k > 1 else [])]
    return names, ["---:"] * len(names)


def group_row(c: dict, k: int) -> list[str]:
    extra = [pct(c["pass_hat_k"]), interval(c, "pass_hat_k_ci95")] if k > 1 else []
    return [str(c["n"]), str(c["correct"]), pct(c["accuracy"]), interval(c), *extra]


def stat(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "—"
    return str(int(value)) if float(value).is_integer() else f"{value:.{digits}f}"


def task_stats(r: dict) -> list[str]:
    """Seconds, tool calls, SQL errors and tokens of a task (the mean over its attempts), — where not recorded."""
    tokens = None if r.get("prompt_tokens") is None and r.get("completion_tokens") is None else \
        (r.get("prompt_tokens") or 0) + (r.get("completion_tokens") or 0)
    return [stat(r.get("seconds")), stat(r.get("tool_calls")), stat(r.get("sql_errors")), stat(tokens)]


TASK_STATS = ("seconds", "tool calls", "SQL errors", "tokens")


def right(r: dict, k: int) -> str:
    return ("yes" if r["correct"] else "no") if k == 1 else f"{r['right']}/{k}"


def markdown(report: dict, title: str) -> str:
    k = report.get("epochs", 1)
    lines = [f"# Scores: {_md(title)}", ""]
    for line in headline(report):
        lines += [_sentence(line), ""]
    names, align = group_header(k)
    for key, label in GROUPS:
        lines += [f"## {label}", "", f"| | {' | '.join(names)} |", f"| --- | {' | '.join(align)} |"]
        lines += [f"| {_md(name)} | {' | '.join(group_row(c, k))} |" for name, c in report[key].items()]
        lines.append("")
        if key == "by_tier" and without_rules_line(report):
            lines += [_sentence(without_rules_line(report)), ""]
    for key, label in TEAM_GROUPS:
        if key not in report:  # a report scored before these groups existed
            continue
        lines += [f"## {label}", "", f"| | {' | '.join(names)} | dominant failure |",
                  f"| --- | {' | '.join(align)} | --- |"]
        lines += [f"| {_md(name)} | {' | '.join(group_row(c, k))} | {_md(failure_cell(c))} |"
                  for name, c in report[key].items()]
        lines.append("")
    if report["reasons"]:
        what = "tasks" if k == 1 else "attempts"
        lines += ["## Why answers were wrong", "", f"| class | {what} | share of the wrong |", "| --- | ---: | ---: |"]
        lines += [f"| {_md(name)} | {n} | {pct(share)} |" for name, n, share in failures(report)]
        lines.append("")
        lines += [f"- **{_md(name)}**: {_md(text)}" for name, text in class_definitions(report["reasons"])]
        lines.append("")
    problems = report["answers_file"]
    if problems["problems"] or problems["unknown_task_ids"]:
        lines += ["## Answers file", ""]
        lines += [f"- {_md(p)}" for p in problems["problems"]]
        if problems["unknown_task_ids"]:
            lines.append(f"- answers for tasks not in the bundle: {', '.join(map(_md, problems['unknown_task_ids']))}")
        lines.append("")
    lines += ["## Tasks", "", f"| task | analysis type | tier | correct | class | reason | {' | '.join(TASK_STATS)} |",
              "| --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {_md(r['task_id'])} | {_md(r['analysis_type'])} | {_md(r['tier'])} | {right(r, k)} | "
              f"{_md(r['failure'])} | "
              f"{_md(r['reason'])} | {' | '.join(task_stats(r))} |" for r in report["results"]]
    return "\n".join(lines) + "\n"


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~!&])")


def _md(text) -> str:
    """Text from a bundle or an answers file as one line of markdown that shows it as it is: a task id such as
    `<img src=x>` or `[x](javascript:…)` is no markup, a `|` no table cell, a line break no new block."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


# ---- HTML --------------------------------------------------------------------------------------------


def hbar_chart(rows: list[tuple], title: str) -> str:
    """Horizontal bars of accuracy, one per (label, n, accuracy[, 95 % interval]); the interval as a whisker."""
    label_w, bar_w, row_h, top = 250, 380, 28, 34
    width, height = label_w + bar_w + 90, top + row_h * max(len(rows), 1) + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" font-family="{FONT}" role="img" aria-label="{escape(title)}" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">',
             f'<text x="0" y="18" font-size="15" font-weight="600" fill="{INK}">{escape(title)}</text>']
    for i, (label, n, acc, *ci) in enumerate(rows):
        y = top + i * row_h
        filled = 0 if acc is None else round(bar_w * acc, 1)
        parts += [
            f'<text x="{label_w - 8}" y="{y + 17}" font-size="13" text-anchor="end" fill="{INK}">'
            f'{escape(label)} <tspan fill="{MUTED}">(n={n})</tspan></text>',
            f'<rect x="{label_w}" y="{y + 4}" width="{bar_w}" height="18" rx="3" fill="{TRACK}"/>',
            f'<rect x="{label_w}" y="{y + 4}" width="{filled}" height="18" rx="3" fill="{ACCENT}">'
            f'<title>{escape(label)}: {pct(acc)} of {n}</title></rect>',
            f'<text x="{label_w + bar_w + 8}" y="{y + 17}" font-size="13" fill="{INK}">{pct(acc)}</text>',
        ]
        if ci and ci[0]:
            low, high = (label_w + round(bar_w * x, 1) for x in ci[0])
            parts.append(f'<path d="M{low} {y + 13}H{high}M{low} {y + 8}V{y + 18}M{high} {y + 8}V{y + 18}" '
                         f'stroke="{INK}" stroke-width="1.5" fill="none"/>')
    return "\n".join([*parts, "</svg>"])


def tier_chart(by_tier: dict[str, dict]) -> str:
    """Vertical bars over DI-Bench's three tiers, in order: the knowledge-to-computation drop (Figure 2)."""
    bar_w, gap, plot_h, top, left = 120, 60, 220, 40, 50
    width = left + len(TIERS) * (bar_w + gap)
    height = top + plot_h + 70
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" font-family="{FONT}" role="img" aria-label="Accuracy by tier" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">',
             f'<text x="0" y="18" font-size="15" font-weight="600" fill="{INK}">'
             f'Knowledge → + analytics → + rule</text>']
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        y = top + plot_h * (1 - tick)
        parts += [f'<line x1="{left}" y1="{y}" x2="{width}" y2="{y}" stroke="{TRACK}"/>',
                  f'<text x="{left - 6}" y="{y + 4}" font-size="11" text-anchor="end" fill="{MUTED}">'
                  f'{int(tick * 100)}%</text>']
    for i, tier in enumerate(TIERS):
        x = left + gap / 2 + i * (bar_w + gap)
        cell = by_tier.get(tier)
        acc = cell["accuracy"] if cell else None
        h = 0 if acc is None else round(plot_h * acc, 1)
        label = "no tasks" if cell is None else f"{pct(acc)} (n={cell['n']})"
        parts += [f'<rect x="{x}" y="{top + plot_h - h}" width="{bar_w}" height="{h}" rx="3" fill="{ACCENT}">'
                  f'<title>{escape(tier)}: {label}</title></rect>',
                  f'<text x="{x + bar_w / 2}" y="{top + plot_h - h - 6}" font-size="12" text-anchor="middle" '
                  f'fill="{INK}">{escape(label)}</text>']
        words = tier.split("+")
        for j, word in enumerate(words):
            parts.append(f'<text x="{x + bar_w / 2}" y="{top + plot_h + 18 + 15 * j}" font-size="12" '
                         f'text-anchor="middle" fill="{INK}">{"+ " if j else ""}{escape(word)}</text>')
    return "\n".join([*parts, "</svg>"])


CSS = """body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1d2733;max-width:960px;
margin:2rem auto;padding:0 1rem}h1{font-size:1.5rem;margin-bottom:.2rem}.big{font-size:2.4rem;font-weight:700;
color:#2f6fb3}.muted{color:#6b7785}section{margin:2rem 0}table{border-collapse:collapse;width:100%;margin-top:.5rem}
th,td{text-align:left;padding:.3rem .6rem;border-bottom:1px solid #e6ebf1;vertical-align:top;overflow-wrap:anywhere}
td.n{text-align:right}
.ok{color:#1e7b34}.no{color:#b3261e}.charts{display:flex;flex-wrap:wrap;gap:2rem}
article.wrong{border-top:1px solid #e6ebf1;padding:.4rem 0}article.wrong h3{font-size:1rem;margin:.4rem 0}
p.q{margin:.2rem 0;font-weight:500}dl.classes dt{font-weight:600;margin-top:.3rem}dl.classes dd{margin:0 0 0 1rem}
article.wrong td{width:33%}p.failure{margin:.1rem 0;color:#b3261e;font-weight:600}
form.filters{display:flex;flex-wrap:wrap;gap:.4rem 1rem;margin:.5rem 0}form.filters select{max-width:16rem}
pre{margin:0;white-space:pre-wrap;word-break:break-word;
font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}"""


def group_table(group: dict[str, dict], label: str, k: int, note: str = "", failures: bool = False) -> str:
    names, _ = group_header(k)
    head = "".join(f"<th>{escape(n)}</th>" for n in names) + ("<th>dominant failure</th>" if failures else "")
    body = "".join(f"<tr><td>{escape(name)}</td>" + "".join(f"<td class=n>{escape(v)}</td>" for v in group_row(c, k))
                   + (f"<td>{escape(failure_cell(c))}</td>" if failures else "") + "</tr>" for name, c in group.items())
    after = f"<p class=muted>{escape(note)}</p>" if note else ""
    return f"<section><h2>{escape(label)}</h2><table><tr><th></th>{head}</tr>{body}</table>{after}</section>"


def failures_table(report: dict) -> str:
    what = "tasks" if report.get("epochs", 1) == 1 else "attempts"
    body = "".join(f"<tr><td>{escape(name)}</td><td class=n>{n}</td><td class=n>{pct(share)}</td></tr>"
                   for name, n, share in failures(report))
    terms = "".join(f"<dt>{escape(name)}</dt><dd>{escape(text)}</dd>"
                    for name, text in class_definitions(report["reasons"]))
    return (f"<section><h2>Why answers were wrong</h2><table><tr><th>class</th><th>{what}</th><th>share of the wrong"
            f"</th></tr>{body}</table><dl class=classes>{terms}</dl></section>")


def html(report: dict, title: str) -> str:
    k = report.get("epochs", 1)
    first, second, third, *more = headline(report)
    charts = [hbar_chart(_rows(report["by_analysis_type"]), "Accuracy by analysis type"),
              tier_chart(report["by_tier"]),
              hbar_chart(_rows(report["by_rule_type"]), "Accuracy by rule type"),
              hbar_chart(_rows(report["by_domain"]), "Accuracy by domain")]
    tables = [group_table(report[key], label, k, _sentence(without_rules_line(report))
                          if key == "by_tier" and without_rules_line(report) else "") for key, label in GROUPS]
    tables += [group_table(report[key], label, k, failures=True) for key, label in TEAM_GROUPS if key in report]
    if report["reasons"]:
        tables.append(failures_table(report))
    wrong = [r for r in report["results"] if not r["correct"]]
    if wrong:
        tables.append(wrong_answers(wrong, report["against"]))
    heads = "".join(f"<th>{escape(h)}</th>" for h in ("task", "analysis type", "tier", "", "class", "reason",
                                                       *TASK_STATS))
    tasks = "".join(
        f"<tr><td>{escape(r['task_id'])}</td><td>{escape(r['analysis_type'])}</td><td>{escape(r['tier'])}</td>"
        f"<td class={'ok' if r['correct'] else 'no'}>{('✓' if r['correct'] else '✗') if k == 1 else right(r, k)}</td>"
        f"<td>{escape(r['failure'])}</td><td>{escape(r['reason'])}</td>"
        + "".join(f"<td class=n>{v}</td>" for v in task_stats(r)) + "</tr>" for r in report["results"])
    o = report["overall"]
    big = f"<span class=big>{pct(o['accuracy'])}</span>"
    if k > 1:
        big = f"pass@1 {big} pass^{k} <span class=big>{pct(o['pass_hat_k'])}</span>"
    return (f"<!doctype html>\n<html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>"
            f"<style>{CSS}</style></head><body>\n<h1>Scores: {escape(title)}</h1>\n"
            f"<p>{big} <span class=muted>{escape(first.split(': ', 1)[1])}</span></p>\n"
            + "".join(f"<p class=muted>{escape(line)}</p>\n" for line in (second, third, *more))
            + f"<section class=charts>\n{chr(10).join(charts)}\n</section>\n{''.join(tables)}\n"
            f"<section><h2>Tasks</h2><table><tr>{heads}</tr>{tasks}</table></section>\n</body></html>\n")


SHOWN_CHARS = 2000  # of an answer or a gold on the page; score.json has them whole


PAGE = 50  # wrong-answer cards drawn at a time: the page of a thousand wrong answers opens as fast as one of fifty
FILTERS = (("failure", "class"), ("type", "analysis type"), ("metric", "metric"), ("rules", "rule"))


def wrong_answers(wrong: list[dict], against: str) -> str:
    """The wrong answers as cards, filtered by class, analysis type, metric and rule (and words or an id), drawn
    PAGE at a time: each card holds the question, the class, the rules in force, the expected answer, the answer
    without the rules and the given one. The cards are JSON in the page, drawn by its script as text (never HTML)."""
    cards = [{"id": r["task_id"], "type": r["analysis_type"], "tier": r["tier"], "metric": r.get("metric") or "",
              "rules": r.get("rule_ids") or [], "in_force": r.get("rules_in_force") or [],
              "failure": r.get("failure") or r.get("kind") or "", "question": r.get("question") or "(no question)",
              "expected": _shown(r.get("expected")), "base": None if r.get("without_rules") is None
              else _shown(r["without_rules"]), "given": "no answer" if r.get("answer") is None else _shown(r["answer"]),
              "reason": r["reason"]} for r in wrong]
    return (f'<section id=wrong><h2>Wrong answers ({len(wrong)})</h2>'
            + paged_list("wrong", cards, FILTERS, "task id or words", '<div id=wrong-cards></div>',
                         _CARD_JS.replace("__AGAINST__", json.dumps(against)))
            + "</section>")


def filter_selects(items: list[dict], filters) -> str:
    """A <select data-key> per (key, label) of `filters`, its options every value the items have (a list's each
    value) with its count; "all" first."""
    selects = []
    for key, label in filters:
        counts: dict[str, int] = {}
        for item in items:
            for value in (item[key] if isinstance(item[key], list) else [item[key]]):
                counts[value] = counts.get(value, 0) + 1
        options = "".join(f'<option value="{escape(v, quote=True)}">{escape(v or "(none)")} ({n})</option>'
                          for v, n in sorted(counts.items()))
        selects.append(f'<label>{escape(label)} <select data-key="{key}"><option value="">all</option>{options}'
                       "</select></label>")
    return "".join(selects)


def json_script(element_id: str, value) -> str:
    """`value` as JSON data in the page; JSON's own escape of '<': no value can open or close a tag."""
    return f'<script type="application/json" id={element_id}>{dumps(value).replace("<", chr(92) + "u003c")}</script>'


def paged_list(name: str, items: list[dict], filters, placeholder: str, box: str, item_js: str,
               extra_js: str = "") -> str:
    """A list drawn PAGE items at a time from JSON data in the page (`name`-data), filtered by the selects of
    `filters` and a search box (an id, or words of `words(c)`): the form, the count line (`name`-count), `box`
    (holding the element `name`-cards the items go in) and the "more" button (`name`-more). `item_js` defines
    `item(c)` (an element for an item, its text set as text, never HTML) and `words(c)`; `extra_js` runs in the
    same scope before the first draw (it may set the inputs and call `draw()`; __PAGE__ is the page size). The
    enclosing element has id `name`."""
    script = (_LIST_JS.replace("__ITEM__", item_js).replace("__EXTRA__", extra_js).replace("__NAME__", name)
              .replace("__PAGE__", str(PAGE)))
    return (f'<form class=filters onsubmit="return false">{filter_selects(items, filters)}<label>search <input '
            f'type=search data-key=text placeholder="{escape(placeholder, quote=True)}"></label></form>'
            f'<p class=muted id={name}-count></p>{box}'
            f'<p><button type=button id={name}-more>show {PAGE} more</button></p>'
            f"{json_script(name + '-data', items)}<script>{script}</script>")


_LIST_JS = """(() => {
const items = JSON.parse(document.getElementById('__NAME__-data').textContent);
const box = document.getElementById('__NAME__-cards'), more = document.getElementById('__NAME__-more');
const count = document.getElementById('__NAME__-count');
const inputs = [...document.querySelectorAll('#__NAME__ form [data-key]')];
let shown = __PAGE__;
const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text; return e; };
__ITEM__
function keep(c) {
  return inputs.every(i => {
    const v = i.value.trim(); if (!v) return true;
    if (i.dataset.key === 'text') { const w = v.toLowerCase();
      return c.id.toLowerCase() === w || (c.id + ' ' + words(c)).toLowerCase().includes(w); }
    const have = c[i.dataset.key]; return Array.isArray(have) ? have.includes(v) : have === v;
  });
}
function draw() {
  const kept = items.filter(keep);
  box.replaceChildren(...kept.slice(0, shown).map(item));
  count.textContent = 'showing ' + Math.min(shown, kept.length) + ' of ' + kept.length
    + (kept.length === items.length ? '' : ' (filtered from ' + items.length + ')');
  more.hidden = kept.length <= shown;
}
inputs.forEach(i => i.addEventListener('input', () => { shown = __PAGE__; draw(); }));
more.addEventListener('click', () => { shown += __PAGE__; draw(); });
__EXTRA__
draw();
})();"""

_CARD_JS = """const against = __AGAINST__;
const words = c => c.question;
function item(c) {
  const a = el('article', 'wrong'); a.dataset.task = c.id;
  const h = el('h3'); h.append(document.createTextNode(c.id + ' '));
  h.append(el('span', 'muted', c.type + ', ' + c.tier)); a.append(h);
  a.append(el('p', 'failure', c.failure));
  a.append(el('p', 'q', c.question));
  a.append(el('p', 'muted rules', 'metric ' + (c.metric || '(none)') + '; rules in force: '
    + (c.in_force.length ? c.in_force.join(', ') : 'none')));
  const t = el('table'), head = el('tr'), row = el('tr');
  const cols = [[against, 'expected', c.expected], ['without the rules', 'base', c.base], ['given', 'given', c.given]];
  for (const [label, cls, text] of cols) { if (text === null) continue;
    head.append(el('th', '', label)); const td = el('td', cls); td.append(el('pre', '', text)); row.append(td); }
  t.append(head, row); a.append(t); a.append(el('p', 'no', c.reason));
  return a;
}"""


def _shown(value) -> str:
    text = value if isinstance(value, str) else json.dumps(plain(value), ensure_ascii=False, indent=1, sort_keys=True)
    if len(text) <= SHOWN_CHARS:
        return text
    return text[:SHOWN_CHARS] + f"… ({len(text) - SHOWN_CHARS:,} characters more in score.json)"


def _rows(group: dict[str, dict]) -> list[tuple]:
    return [(name, c["n"], c["accuracy"], c.get("ci95")) for name, c in group.items()]
