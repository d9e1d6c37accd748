"""A leaderboard of several runs on one bundle: accuracy with its interval overall and by group, the failure
classes of each run, and the tasks that flipped between neighbours of the ranking (compare.md, compare.html,
compare.json).

Every run is scored afresh against the same tasks (dptool.evaluate.score), so the runs are ranked on one
denominator: a task a run did not answer is wrong for it. Runs are ranked by accuracy (pass@1 for runs of k > 1
attempts), then by the lower end of its interval, then by name. A task is right in a run when every attempt is
right and wrong when none is; it flipped between two runs when it is right in one and wrong in the other (a task
right in some attempts only is flaky, not flipped). Flips are listed between each pair of neighbours of the
ranking: what the run above gets right that the run below does not, and the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path

from dptool.bundle import fingerprint, short
from dptool.errors import DptoolError
from dptool.evaluate.failures import RULES_NOT_APPLIED, TRUNCATED
from dptool.evaluate.report import CSS, GROUPS, hbar_chart, interval, pct
from dptool.evaluate.score import load_run, score
from dptool.jsontext import dumps
from dptool.outdir import write_files

NAMED = (RULES_NOT_APPLIED, TRUNCATED)  # the failures the benchmark exists to find: a column of their own


@dataclass
class Run:
    """One run, as scored on the compared tasks."""

    name: str
    path: Path
    report: dict


def run_names(paths: list[Path]) -> list[str]:
    """A name per run: the folder's name, or the answers file's without .jsonl; the path when two share one."""
    names = [p.name if p.is_dir() else p.name.removesuffix(".jsonl") for p in paths]
    return [str(p) if names.count(n) > 1 else n for p, n in zip(paths, names, strict=True)]


def load_runs(paths: list[str | Path], bundle: str | Path, tasks: list[dict]) -> list[Run]:
    """Score each run (a run folder or an answers file) on `tasks`; a run made on another bundle is refused."""
    paths = [Path(p) for p in paths]
    mine = fingerprint(bundle)
    runs = []
    for path, name in zip(paths, run_names(paths), strict=True):
        answers = load_run(path)
        others = sorted(answers.bundles - {mine})
        if others:
            raise DptoolError(f"{path}: made on bundle {short(others[0])}, not on {bundle} ({short(mine)}); compare "
                              "runs of one bundle, or give its --bundle")
        runs.append(Run(name, path, score(tasks, answers)))
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
                        "domain": r["domain"], "failure": r["failure"], "reason": r["reason"]})
    return out


def compare(runs: list[Run], bundle: str | Path, tasks: list[dict]) -> dict:
    """The leaderboard: runs ranked, their cells by group, failure classes and the flips between neighbours."""
    ranked = sorted(runs, key=_rank_key)
    ids = [t["task_id"] for t in tasks]
    board = []
    for place, run in enumerate(ranked, 1):
        r = run.report
        wrong = sum(r["reasons"].values())
        board.append({"rank": place, "name": run.name, "path": str(run.path), "epochs": r["epochs"],
                      "overall": r["overall"], "failures": r["reasons"],
                      "failure_shares": {c: round(n / wrong, 4) for c, n in r["reasons"].items()},
                      "groups": {key: r[key] for key, _ in GROUPS}})
    flips = []
    for above, below in zip(ranked, ranked[1:], strict=False):
        a, b = _right(above.report), _right(below.report)
        ra = {r["task_id"]: r for r in above.report["results"]}
        rb = {r["task_id"]: r for r in below.report["results"]}
        flips.append({"above": above.name, "below": below.name,
                      "right_above_only": _flipped(ids, a, b, rb),
                      "right_below_only": _flipped(ids, b, a, ra)})
    return {"bundle": fingerprint(bundle), "bundle_path": str(bundle), "tasks": len(tasks), "runs": board,
            "flips": flips}


# ---- markdown ------------------------------------------------------------------------------------------------

FLIPS_SHOWN = 5  # task ids of a flip on the terminal; compare.md lists them all


def _cell_text(c: dict | None) -> str:
    return "—" if c is None else f"{pct(c['accuracy'])} [{interval(c)}]"


def _pass_k(run: dict) -> str:
    o = run["overall"]
    return "—" if run["epochs"] == 1 else f"{pct(o['pass_hat_k'])} [{interval(o, 'pass_hat_k_ci95')}]"


def _failure_text(run: dict, name: str) -> str:
    n = run["failures"].get(name)
    return "—" if not n else f"{n} ({pct(run['failure_shares'][name])})"


def leaderboard_rows(result: dict) -> tuple[list[str], list[list[str]]]:
    """The leaderboard as a header and rows of text (shared by markdown and HTML)."""
    head = ["rank", "run", "accuracy", "95 % interval", "pass^k", "k", "coverage", "rules not applied",
            "truncated"]
    rows = []
    for run in result["runs"]:
        o = run["overall"]
        rows.append([str(run["rank"]), run["name"], pct(o["accuracy"]), interval(o), _pass_k(run), str(run["epochs"]),
                     pct(o["coverage"]), _failure_text(run, RULES_NOT_APPLIED), _failure_text(run, TRUNCATED)])
    return head, rows


def group_rows(result: dict, key: str) -> tuple[list[str], list[list[str]]]:
    """Accuracy [interval] of every run in one group, a row per group (the runs share their tasks, so their groups)."""
    first = result["runs"][0]["groups"][key]
    head = ["", "tasks", *(run["name"] for run in result["runs"])]
    return head, [[g, str(c["n"]), *(_cell_text(run["groups"][key].get(g)) for run in result["runs"])]
                  for g, c in first.items()]


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
                   "ranking.")


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
    lines = [f"# Compare: {title(result)}", "", EXPLAINED, "", "## Leaderboard", "",
             *_table(*leaderboard_rows(result), text=(1,))]
    for key, label in GROUPS if full else [g for g in GROUPS if g[0] == "by_tier"]:
        lines += [f"## {label}", "", *_table(*group_rows(result, key))]
    head, rows = failure_rows(result)
    if rows:
        lines += ["## Why answers were wrong (share of each run's wrong answers)", "", *_table(head, rows)]
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
        lines += ["compare.md has every flipped task and the tables by analysis type, rule type and domain.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# ---- HTML ----------------------------------------------------------------------------------------------------

_COMPARE_CSS = CSS + """td,th{overflow-wrap:anywhere}td.n,th.n{text-align:right;white-space:nowrap}
h3{font-size:1rem;margin:1.2rem 0 .2rem}"""


def _html_table(head: list[str], rows: list[list[str]], numeric_from: int = 2) -> str:
    def cls(i: int) -> str:
        return " class=n" if i >= numeric_from else ""

    return ("<table><tr>" + "".join(f"<th{cls(i)}>{escape(h)}</th>" for i, h in enumerate(head)) + "</tr>"
            + "".join("<tr>" + "".join(f"<td{cls(i)}>{escape(c)}</td>" for i, c in enumerate(row)) + "</tr>"
                      for row in rows) + "</table>")


def html(result: dict) -> str:
    """compare.html: one self-contained page (inline SVG, no JavaScript, no external asset)."""
    chart = hbar_chart([(run["name"], run["overall"]["n"], run["overall"]["accuracy"], run["overall"]["ci95"])
                        for run in result["runs"]], "Accuracy with its 95 % interval")
    parts = [f"<h1>Compare: {escape(title(result))}</h1>", f"<p class=muted>{escape(EXPLAINED)}</p>",
             f"<section id=leaderboard><h2>Leaderboard</h2>{chart}"
             f"{_html_table(*leaderboard_rows(result))}</section>"]
    for key, label in GROUPS:
        parts.append(f"<section><h2>{escape(label)}</h2>{_html_table(*group_rows(result, key), numeric_from=1)}"
                     "</section>")
    head, rows = failure_rows(result)
    if rows:
        parts.append("<section id=failures><h2>Why answers were wrong</h2><p class=muted>Share of each run's wrong "
                     f"answers.</p>{_html_table(head, rows, numeric_from=1)}</section>")
    flips = [f"<section id=flips><h2>Flipped tasks</h2><p class=muted>{escape(FLIPS_EXPLAINED)}</p>"]
    for flip in result["flips"]:
        flips.append(f"<h3>{escape(pair_heading(flip))}</h3>")
        for side, right_in, wrong_in in _sides(flip):
            tasks = flip[side]
            if tasks:
                flips.append(f"<p class=flip>{escape(flip_heading(right_in, wrong_in, len(tasks)))}:</p>"
                             + _html_table(["task", "analysis type", "tier", f"class in {wrong_in}", "reason"],
                                           [[t["task_id"], t["analysis_type"], t["tier"], t["failure"], t["reason"]]
                                            for t in tasks], numeric_from=99))
    parts.append("".join(flips) + "</section>")
    return (f"<!doctype html>\n<html lang=en><head><meta charset=utf-8><title>Compare: {escape(title(result))}</title>"
            f"<style>{_COMPARE_CSS}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n")


COMPARE_FILES = ("compare.json", "compare.md", "compare.html")


def write_compare(result: dict, out: str | Path) -> list[Path]:
    """Write compare.json, compare.md and compare.html into `out`; byte-stable for the same runs. Written as
    dptool.outdir writes files: a file of the user's there is refused, never overwritten."""
    files = {"compare.json": dumps(result, levels=8) + "\n",
             "compare.md": markdown(result), "compare.html": html(result)}
    return write_files(out, files)
