"""A leaderboard of several runs on one bundle: accuracy with its interval overall and by group, the failure
classes of each run, and the tasks that flipped between neighbours of the ranking (compare.md, compare.html,
compare.json).

Every run is scored afresh as `dptool score` scores it (dptool.evaluate.score.as_run): on the tasks selected, or
where none are, on those its run.json says it ran; a run of the oracle or no-rule condition on the rule tier, a
no-rule run against the rule-free answers. Runs of one selection and condition share one denominator: a task a run
did not answer is wrong for it. Each run shows its condition and whether run.json marks it incomplete (an
interrupted or errored log imported as a run). Runs are ranked by accuracy (pass@1 for runs of k > 1 attempts),
then by the lower end of its interval, then by name. A task is right in a run when every attempt is
right and wrong when none is; it flipped between two runs when it is right in one and wrong in the other (a task
right in some attempts only is flaky, not flipped). Flips are listed between each pair of neighbours of the
ranking, over the tasks both were scored on: what the run above gets right that the run below does not, and the
other way round.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from pathlib import Path

from dptool.bundle import fingerprint, short
from dptool.errors import DptoolError
from dptool.evaluate.failures import NAMED
from dptool.evaluate.report import (
    CSS,
    GROUPS,
    TEAM_GROUPS,
    class_definitions,
    failure_cell,
    hbar_chart,
    interval,
    paged_list,
    pct,
)
from dptool.evaluate.score import as_run, load_run, score
from dptool.evaluate.select import Selection
from dptool.files.jsontext import dumps
from dptool.outdir import write_files


@dataclass
class Run:
    """One run, as scored on the compared tasks."""

    name: str
    path: Path
    report: dict
    condition: str | None = None  # run.json's (standard, oracle, no-rule); None for an answers file
    complete: bool | None = None  # False: run.json marks it incomplete; None: an answers file


def run_names(paths: list[Path]) -> list[str]:
    """A name per run: the folder's name, or the answers file's without .jsonl; the path when two share one."""
    names = [p.name if p.is_dir() else p.name.removesuffix(".jsonl") for p in paths]
    return [str(p) if names.count(n) > 1 else n for p, n in zip(paths, names, strict=True)]


def load_runs(paths: list[str | Path], bundle: str | Path, tasks: list[dict],
              selection: Selection | None = None) -> list[Run]:
    """Score each run (a run folder or an answers file) as `dptool score` does: on the bundle's `tasks` that
    `selection` selects (none given: those the run ran), as its condition scores them; a run made on another bundle
    is refused."""
    paths = [Path(p) for p in paths]
    mine = fingerprint(bundle)
    runs = []
    for path, name in zip(paths, run_names(paths), strict=True):
        answers = load_run(path)
        others = sorted(answers.bundles - {mine})
        if others:
            raise DptoolError(f"{path}: made on bundle {short(others[0])}, not on {bundle} ({short(mine)}); compare "
                              "runs of one bundle, or give its --bundle")
        scored, against, _ = as_run(tasks, answers, selection or Selection())
        condition = answers.run.get("condition")
        runs.append(Run(name, path, score(scored, answers, against=against, bundle_ids={t["task_id"] for t in tasks}),
                        condition if isinstance(condition, str) else None,
                        None if not path.is_dir() else answers.run.get("complete") is not False))
    return runs


def _rank_key(run: Run) -> tuple:
    o = run.report["overall"]
    return (-(o["accuracy"] or 0), -((o["ci95"] or [0])[0]), run.name)


def _right(report: dict) -> dict[str, bool | None]:
    """Per task: True when every attempt is right, False when none is, None when some are (flaky)."""
    k = report["epochs"]
    return {r["task_id"]: True if r["right"] == k else False if r["right"] == 0 else None for r in report["results"]}


def _flipped(task_ids: list[str], right: dict, wrong: dict, wrong_results: dict[str, dict]) -> list[dict]:
    """The tasks right in one run and wrong in the other, with the class and reason of the wrong one."""
    out = []
    for task_id in task_ids:
        if right[task_id] is True and wrong[task_id] is False:
            r = wrong_results[task_id]
            out.append({"task_id": task_id, "analysis_type": r["analysis_type"], "tier": r["tier"],
                        "domain": r["domain"], "metric": r.get("metric") or "", "rule_ids": r.get("rule_ids") or [],
                        "failure": r["failure"], "reason": r["reason"]})
    return out


def compare(runs: list[Run], bundle: str | Path, tasks: list[dict]) -> dict:
    """The leaderboard: runs ranked, their cells by group, failure classes and the flips between neighbours
    (`tasks`: the bundle's, in the order flips list them)."""
    ranked = sorted(runs, key=_rank_key)
    scored = [{r["task_id"] for r in run.report["results"]} for run in runs]
    board = []
    for place, run in enumerate(ranked, 1):
        r = run.report
        wrong = sum(r["reasons"].values())
        board.append({"rank": place, "name": run.name, "path": str(run.path), "epochs": r["epochs"],
                      "condition": run.condition, "complete": run.complete, "against": r["against"],
                      "overall": r["overall"], "failures": r["reasons"],
                      "failure_shares": {c: round(n / wrong, 4) for c, n in r["reasons"].items()},
                      "groups": {key: r[key] for key, _ in (*GROUPS, *TEAM_GROUPS)}})
    flips = []
    for above, below in zip(ranked, ranked[1:], strict=False):
        a, b = _right(above.report), _right(below.report)
        ids = [t["task_id"] for t in tasks if t["task_id"] in a and t["task_id"] in b]  # scored in both
        ra = {r["task_id"]: r for r in above.report["results"]}
        rb = {r["task_id"]: r for r in below.report["results"]}
        flips.append({"above": above.name, "below": below.name,
                      "right_above_only": _flipped(ids, a, b, rb),
                      "right_below_only": _flipped(ids, b, a, ra)})
    every = set().union(*scored) if scored else set()
    return {"bundle": fingerprint(bundle), "bundle_path": str(bundle), "tasks": len(every),
            "same_tasks": all(ids == scored[0] for ids in scored), "runs": board, "flips": flips}


# ---- markdown ------------------------------------------------------------------------------------------------

FLIPS_SHOWN = 5  # task ids of a flip on the terminal; compare.md lists them all


def _cell_text(c: dict | None) -> str:
    return "—" if c is None else f"{pct(c['accuracy'])} [{interval(c)}]"


def _pass_k(run: dict) -> str:
    o = run["overall"]
    return "—" if run["epochs"] == 1 else f"{pct(o['pass_hat_k'])} [{interval(o, 'pass_hat_k_ci95')}]"


def _failure_text(run: dict, name: str) -> str:
    n = run["failures"].get(name)
    return "—" if not n else f"{n} ({pct(n / sum(run['failures'].values()))})"  # as score.md shows it


def leaderboard_rows(result: dict) -> tuple[list[str], list[list[str]]]:
    """The leaderboard as a header and rows of text (shared by markdown and HTML)."""
    head = ["rank", "run", "accuracy", "95 % interval", "pass^k", "k", "coverage", *NAMED, "tasks", "condition",
            "complete"]
    rows = []
    for run in result["runs"]:
        o = run["overall"]
        rows.append([str(run["rank"]), run["name"], pct(o["accuracy"]), interval(o), _pass_k(run), str(run["epochs"]),
                     pct(o["coverage"]), *(_failure_text(run, c) for c in NAMED), str(o["n"]), _condition(run),
                     _complete(run)])
    return head, rows


def _condition(run: dict) -> str:
    """The run's condition and what it was scored against: "no-rule, against base"; "—" for an answers file."""
    name = run.get("condition") or "—"
    return name if run.get("against", "gold") == "gold" else f"{name}, against {run['against']}"


def _complete(run: dict) -> str:
    return {True: "yes", False: "no: marked incomplete"}.get(run.get("complete"), "—")


def group_rows(result: dict, key: str) -> tuple[list[str], list[list[str]]]:
    """Accuracy [interval] of every run in one group, a row per group ("tasks": each count the runs have, where
    they were scored on different tasks); by metric and by rule each run's dominant failure class too."""
    runs = result["runs"]
    names = sorted({g for run in runs for g in run["groups"].get(key, {})})
    head = ["", "tasks", *(run["name"] for run in runs)]
    rows = []
    for g in names:
        cells = [run["groups"].get(key, {}).get(g) for run in runs]
        counts = " / ".join(dict.fromkeys(str(c["n"]) for c in cells if c is not None))
        text = [_cell_text(c) + (f"; {failure_cell(c)}" if c is not None and "dominant_failure" in c else "")
                for c in cells]
        rows.append([g, counts, *text])
    return head, rows


def failure_definitions(result: dict) -> list[tuple[str, str]]:
    """(class, one-line definition) of every failure class some run has."""
    return class_definitions(c for run in result["runs"] for c in run["failures"])


def failure_rows(result: dict) -> tuple[list[str], list[list[str]]]:
    classes = sorted({c for run in result["runs"] for c in run["failures"]},
                     key=lambda c: (c not in NAMED, NAMED.index(c) if c in NAMED else 0, c))
    head = ["class", *(run["name"] for run in result["runs"])]
    return head, [[c, *(_failure_text(run, c) for run in result["runs"])] for c in classes]


def _table(head: list[str], rows: list[list[str]], text: tuple[int, ...] = (0,)) -> list[str]:
    """A markdown table; the columns `text` are left-aligned, the others (numbers) right-aligned."""
    align = ["---" if i in text else "---:" for i in range(len(head))]
    return [f"| {' | '.join(_md(h) for h in head)} |", f"| {' | '.join(align)} |",
            *(f"| {' | '.join(_md(c) for c in row)} |" for row in rows), ""]


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


EXPLAINED = ("Accuracy over every task (a task without an answer is wrong; pass@1 for k > 1 attempts), with its 95 % "
             "Wilson score interval over tasks; pass^k: the share of tasks right in every one of k attempts.")
FLIPS_EXPLAINED = ("Right in one run (every attempt) and wrong in the other (no attempt), between neighbours of the "
                   "ranking, over the tasks both were scored on.")
DIFFERENT_TASKS = ("The runs were scored on different tasks, each as it ran (its selection; the rule tier for an "
                   "oracle or no-rule run): their accuracies are over different tasks.")
GROUP_NOTE = "By metric and by rule, each run's cell ends with its dominant failure class (wrong answers)."


def _sides(flip: dict) -> list[tuple[str, str, str]]:
    return [("right_above_only", flip["above"], flip["below"]), ("right_below_only", flip["below"], flip["above"])]


def pair_heading(flip: dict) -> str:
    return (f"{flip['above']} → {flip['below']}: {len(flip['right_above_only'])} right in {flip['above']} only, "
            f"{len(flip['right_below_only'])} right in {flip['below']} only")


def flip_heading(right_in: str, wrong_in: str, n: int) -> str:
    return f"{n} task{'s' if n != 1 else ''} right in {right_in} and wrong in {wrong_in}"


def title(result: dict) -> str:
    return (f"{len(result['runs'])} runs on {Path(result['bundle_path']).name} ({short(result['bundle'])}), "
            f"{result['tasks']} tasks")


def markdown(result: dict, *, full: bool = True) -> str:
    """compare.md (`full`), or the terminal's version: the leaderboard, by tier, the failure classes and a few
    task ids per flip."""
    lines = [f"# Compare: {title(result)}", "", EXPLAINED, "",
             *([DIFFERENT_TASKS, ""] if not result.get("same_tasks", True) else []), "## Leaderboard", "",
             *_table(*leaderboard_rows(result), text=(1, 11, 12))]
    for key, label in (*GROUPS, *TEAM_GROUPS) if full else [g for g in GROUPS if g[0] == "by_tier"]:
        note = [GROUP_NOTE, ""] if (key, label) in TEAM_GROUPS else []
        lines += [f"## {label}", "", *note, *_table(*group_rows(result, key))]
    head, rows = failure_rows(result)
    if rows:
        lines += ["## Why answers were wrong (share of each run's wrong answers)", "", *_table(head, rows)]
        lines += [f"- **{_md(name)}**: {_md(text)}" for name, text in failure_definitions(result)] + [""]
    lines += ["## Flipped tasks", "", FLIPS_EXPLAINED, ""]
    for flip in result["flips"]:
        lines += [f"### {pair_heading(flip)}", ""]
        for side, right_in, wrong_in in _sides(flip):
            tasks = flip[side]
            if not tasks:
                continue
            if full:
                lines += [f"{flip_heading(right_in, wrong_in, len(tasks))}:", "",
                          *_table(["task", "analysis type", "tier", f"class in {wrong_in}", "reason"],
                                  [[t["task_id"], t["analysis_type"], t["tier"], t["failure"], t["reason"]]
                                   for t in tasks], text=(0, 1, 2, 3, 4))]
            else:
                shown = ", ".join(t["task_id"] for t in tasks[:FLIPS_SHOWN])
                more = f" and {len(tasks) - FLIPS_SHOWN} more" if len(tasks) > FLIPS_SHOWN else ""
                lines += [f"{flip_heading(right_in, wrong_in, len(tasks))}: {shown}{more}", ""]
    if not full:
        lines += ["compare.md has every flipped task and the tables by analysis type, rule type, domain, metric and "
                  "rule.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# ---- HTML ----------------------------------------------------------------------------------------------------

# Cells wrap at spaces only: an id or a word is never cut (no `overflow-wrap: anywhere`, which lets a table squeeze
# a column below its longest word); ids are monospace and never wrap; the page is wide enough for the leaderboard
_COMPARE_CSS = CSS + """body{max-width:1320px}th,td{overflow-wrap:normal}td.n,th.n{text-align:right}
td.n{white-space:nowrap}h3{font-size:1rem;margin:1.2rem 0 .2rem}
.id{font:12px/1.45 ui-monospace,Menlo,Consolas,monospace;white-space:nowrap}.name{white-space:nowrap}
td.reason{overflow-wrap:anywhere}
table.summary{width:auto}table.summary td,table.summary th{padding:.2rem .8rem .2rem 0}
button.open{font:inherit;min-width:3rem;text-align:right;cursor:pointer}button.groups{font:inherit;cursor:pointer}
tr.sub td{background:#f6f8fa}td.dir{white-space:nowrap}
#flip{margin-top:1.5rem}"""

RIGHT_WRONG, WRONG_RIGHT = "right → wrong", "wrong → right"
FLIP_FILTERS = (("pair", "runs"), ("direction", "direction"), ("type", "analysis type"), ("metric", "metric"),
                ("rules", "rules"))
NONE = "—"  # no metric, no rule: a value of its own (the select's "" is "all")


def _name(text: str) -> str:
    """A run's name or path: never cut inside a part (base-sql), but a path (long, without a space) may wrap after
    a '/'."""
    parts = text.split("/")
    return "<wbr>".join(f"<span class=name>{escape(part)}{'/' if i < len(parts) - 1 else ''}</span>"
                        for i, part in enumerate(parts))


def _pair_heading(flip: dict) -> str:
    """pair_heading with the runs' names as names."""
    above, below = _name(flip["above"]), _name(flip["below"])
    return (f"{above} → {below}: {len(flip['right_above_only'])} right in {above} only, "
            f"{len(flip['right_below_only'])} right in {below} only")


def _id(text: str) -> str:
    return f"<span class=id>{escape(text)}</span>"


def _html_table(head: list[str], rows: list[list[str]], numeric_from: int = 2, ids: tuple[int, ...] = (),
                names: tuple[int, ...] = (), head_names: int = 99) -> str:
    """A table of text: the columns `ids` as ids, `names` as run names, the header from `head_names` on as run
    names, from `numeric_from` on right-aligned numbers."""
    def cls(i: int) -> str:
        return " class=n" if i >= numeric_from else ""

    def cell(i: int, text: str) -> str:
        return _id(text) if i in ids and text else _name(text) if i in names else escape(text)

    return ("<table><tr>" + "".join(f"<th{cls(i)}>{_name(h) if i >= head_names else escape(h)}</th>"
                                    for i, h in enumerate(head)) + "</tr>"
            + "".join("<tr>" + "".join(f"<td{cls(i)}>{cell(i, c)}</td>" for i, c in enumerate(row)) + "</tr>"
                      for row in rows) + "</table>")


def flip_items(result: dict) -> list[dict]:
    """Every flipped task as the page's list has it: the pair of runs, the direction (right in the run above and
    wrong in the one below: right → wrong; the other way: wrong → right), analysis type, metric, rules."""
    items = []
    for flip in result["flips"]:
        pair = f"{flip['above']} → {flip['below']}"
        for side, direction in (("right_above_only", RIGHT_WRONG), ("right_below_only", WRONG_RIGHT)):
            items += [{"pair": pair, "direction": direction, "id": t["task_id"], "type": t["analysis_type"],
                       "metric": t.get("metric") or NONE, "rules": ", ".join(t.get("rule_ids") or []) or NONE,
                       "failure": t["failure"], "reason": t["reason"],
                       "wrong_in": flip["below"] if direction == RIGHT_WRONG else flip["above"]}
                      for t in flip[side]]
    return items


def flip_groups(items: list[dict], pair: str) -> list[tuple[str, str, int, int]]:
    """The flips of a pair counted by direction and analysis type: (direction, type, tasks, groups of metric and
    rules among them), right → wrong first, the largest count first."""
    counts: dict[tuple[str, str], int] = {}
    inner: dict[tuple[str, str], set] = {}
    for t in items:
        if t["pair"] == pair:
            key = (t["direction"], t["type"])
            counts[key] = counts.get(key, 0) + 1
            inner.setdefault(key, set()).add((t["metric"], t["rules"]))
    order = {RIGHT_WRONG: 0, WRONG_RIGHT: 1}
    return [(d, kind, n, len(inner[(d, kind)]))
            for (d, kind), n in sorted(counts.items(), key=lambda kv: (order[kv[0][0]], -kv[1], kv[0][1]))]


def _summary(items: list[dict], flip: dict) -> str:
    """A pair's flips counted by direction × analysis type, each count showing its tasks in the list below; a
    row opens into its counts by metric × rules (drawn from the page's data when asked for)."""
    pair = f"{flip['above']} → {flip['below']}"
    rows = []
    for direction, kind, n, inner in flip_groups(items, pair):
        data = "".join(f' data-{k}="{escape(v, quote=True)}"' for k, v in (("pair", pair), ("direction", direction),
                                                                            ("type", kind)))
        rows.append(f"<tr><td class=dir>{escape(direction)}</td><td>{_id(kind)}</td><td colspan=2><button type=button "
                    f"class=groups{data}>by metric and rules ({inner})</button></td>"
                    f"<td class=n><button type=button class=open{data}>{n}</button></td></tr>")
    return ("<table class=summary><tr><th>direction</th><th>analysis type</th><th>metric</th><th>rules</th>"
            f"<th class=n>tasks</th></tr>{''.join(rows)}</table>")


_FLIP_ROW_JS = """const words = c => c.failure + ' ' + c.reason, NONE = __NONE__;
// a run's name: never cut inside a part, but a path may wrap after a '/'
const name = t => { const s = el('span'); t.split('/').forEach((p, i, all) => {
  s.append(el('span', 'name', p + (i < all.length - 1 ? '/' : ''))); if (i < all.length - 1) s.append(el('wbr')); });
  return s; };
const ids = v => { const td = el('td'); v.split(', ').forEach((r, i) => { if (i) td.append(', ');
  td.append(el('span', r === NONE ? '' : 'id', r)); }); return td; };
function item(c) {
  const tr = el('tr'); tr.dataset.task = c.id;
  const pair = el('td'); c.pair.split(' → ').forEach((n, i) => { if (i) pair.append(' → '); pair.append(name(n)); });
  const id = el('td'); id.append(el('span', 'id', c.id));
  const kind = el('td'); kind.append(el('span', 'id', c.type));
  const failure = el('td', '', c.failure + ' (in '); failure.append(name(c.wrong_in), ')');
  tr.append(pair, el('td', 'dir', c.direction), id, kind, ids(c.metric), ids(c.rules), failure,
            el('td', 'reason', c.reason));
  return tr;
}"""

# a count in the summary: the list shows its tasks (every select set to the count's group, the search cleared); a
# direction's smaller groups: drawn as the first ones are (the same order: the largest first, then by name)
_OPEN_JS = """document.getElementById('flips').addEventListener('click', e => {
  const b = e.target.closest('button.open, button.groups'); if (!b) return;
  if (b.classList.contains('open')) {
    inputs.forEach(i => { i.value = i.dataset.key in b.dataset ? b.dataset[i.dataset.key] : ''; });
    shown = __PAGE__; draw(); document.getElementById('flip').scrollIntoView(); return;
  }
  const row = b.closest('tr');
  if (row.dataset.opened) {  // open: fold its rows away again
    for (let r = row.nextElementSibling; r && r.classList.contains('sub'); r = row.nextElementSibling) r.remove();
    delete row.dataset.opened; return;
  }
  const counts = new Map(), d = b.dataset;
  for (const c of items) if (c.pair === d.pair && c.direction === d.direction && c.type === d.type) {
    const key = JSON.stringify([c.metric, c.rules]); counts.set(key, (counts.get(key) || 0) + 1); }
  const cmp = (x, y) => x < y ? -1 : x > y ? 1 : 0;
  const groups = [...counts].map(([key, n]) => [JSON.parse(key), n])
    .sort((x, y) => y[1] - x[1] || cmp(x[0][0], y[0][0]) || cmp(x[0][1], y[0][1]));
  row.after(...groups.map(([[metric, rules], n]) => {
    const tr = el('tr', 'sub'), open = el('button', 'open', String(n)), count = el('td', 'n');
    Object.assign(open.dataset, {pair: d.pair, direction: d.direction, type: d.type, metric, rules});
    open.type = 'button'; count.append(open);
    tr.append(el('td'), el('td'), ids(metric), ids(rules), count);
    return tr;
  }));
  row.dataset.opened = 'yes';
});"""


def _flips_html(result: dict) -> str:
    items = flip_items(result)
    parts = [f"<section id=flips><h2>Flipped tasks</h2><p class=muted>{escape(FLIPS_EXPLAINED)} "
             f"{escape(RIGHT_WRONG)}: right in the run above, wrong in the run below; {escape(WRONG_RIGHT)}: the "
             "other way. A count shows its tasks in the list below; a row opens into its counts by metric and "
             "rules.</p>"]
    for flip in result["flips"]:
        parts.append(f"<h3>{_pair_heading(flip)}</h3>")
        parts.append(_summary(items, flip) if flip["right_above_only"] or flip["right_below_only"]
                     else "<p class=muted>No task flipped.</p>")
    if items:
        head = "".join(f"<th>{escape(h)}</th>" for h in ("runs", "direction", "task", "analysis type", "metric",
                                                          "rules", "class (in the run wrong)", "reason"))
        parts.append("<div id=flip><h3>The flipped tasks</h3>"
                     + paged_list("flip", items, FLIP_FILTERS, "task id or words",
                                  f"<table><thead><tr>{head}</tr></thead><tbody id=flip-cards></tbody></table>",
                                  _FLIP_ROW_JS.replace("__NONE__", json.dumps(NONE)),
                                  _OPEN_JS)
                     + "</div>")
    return "".join(parts) + "</section>"


def html(result: dict) -> str:
    """compare.html: one self-contained page (inline SVG and script, no external asset); the flipped tasks are JSON
    in the page, counted by group and listed 50 at a time."""
    chart = hbar_chart([(run["name"], run["overall"]["n"], run["overall"]["accuracy"], run["overall"]["ci95"])
                        for run in result["runs"]], "Accuracy with its 95 % interval")
    different = "" if result.get("same_tasks", True) else f"<p class=muted>{escape(DIFFERENT_TASKS)}</p>"
    parts = [f"<h1>Compare: {escape(title(result))}</h1>", f"<p class=muted>{escape(EXPLAINED)}</p>{different}",
             f"<section id=leaderboard><h2>Leaderboard</h2>{chart}"
             f"{_html_table(*leaderboard_rows(result), names=(1,))}</section>"]
    for key, label in (*GROUPS, *TEAM_GROUPS):
        note = f"<p class=muted>{escape(GROUP_NOTE)}</p>" if (key, label) in TEAM_GROUPS else ""
        # a dominant failure class beside each accuracy: cells that wrap, not numbers
        parts.append(f"<section><h2>{escape(label)}</h2>{note}"
                     f"{_html_table(*group_rows(result, key), numeric_from=99 if note else 1, ids=(0,), head_names=2)}"
                     "</section>")
    head, rows = failure_rows(result)
    if rows:
        terms = "".join(f"<dt>{escape(name)}</dt><dd>{escape(text)}</dd>" for name, text in failure_definitions(result))
        parts.append("<section id=failures><h2>Why answers were wrong</h2><p class=muted>Share of each run's wrong "
                     f"answers.</p>{_html_table(head, rows, numeric_from=1, head_names=1)}<dl class=classes>{terms}"
                     "</dl></section>")
    parts.append(_flips_html(result))
    return (f"<!doctype html>\n<html lang=en><head><meta charset=utf-8><title>Compare: {escape(title(result))}</title>"
            f"<style>{_COMPARE_CSS}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n")


COMPARE_FILES = ("compare.json", "compare.md", "compare.html")


def write_compare(result: dict, out: str | Path) -> list[Path]:
    """Write compare.json, compare.md and compare.html into `out`; byte-stable for the same runs. Written as
    dptool.outdir writes files: a file of the user's there is refused, never overwritten."""
    files = {"compare.json": dumps(result, levels=8) + "\n",
             "compare.md": markdown(result), "compare.html": html(result)}
    return write_files(out, files)
