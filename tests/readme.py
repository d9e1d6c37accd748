"""The docs' tour, written from a real run: `python -m tests.readme record` then `render`.

`record` reads what a real `make demo` and `make test` printed (their logs), the demo bundle they wrote, and runs
the few cheap commands the tour shows (`dptool --help`, the reference agents and their scores), into
docs/tour.json. `render` writes each marked section of README.md and the docs pages (docs/*.md) from
docs/tour.json:

    <!-- tour:NAME -->
    ...written by tests/readme.py...
    <!-- /tour:NAME -->

tests/test_readme.py fails when a section differs from what `render` writes (a number changed by hand), and when
what the code produces now (the command list, the example task in the test session's bundle, the number of
tests collected) is not what docs/tour.json recorded. `make readme` runs the whole of it: a fresh `make demo` and
`make test` with their logs, then record and render.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOUR = REPO / "docs" / "tour.json"
README = REPO / "README.md"
PAGES = (README, *sorted((REPO / "docs").glob("*.md")))  # where tour sections may stand


def pages_text() -> str:
    """README.md and every docs page, one after the other (each section stands in exactly one)."""
    return "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
# a section is inline (`<!-- tour:tasks -->1,124<!-- /tour:tasks -->`) or whole lines between its two markers
SECTION = re.compile(r"(<!-- tour:(?P<name>[\w-]+) -->\n?)(?P<body>.*?)(\n?<!-- /tour:(?P=name) -->)", re.DOTALL)
SHORTENED = ("gold_sql", "base_sql")  # SQL fields of the example task, cut to their start


def cli(*args: str, cwd: Path = REPO) -> str:
    """What `dptool ARGS` prints, from this checkout (the `dptool` script of this Python's environment)."""
    proc = subprocess.run([str(Path(sys.executable).parent / "dptool"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=900, env={**os.environ, "COLUMNS": "80"})
    if proc.returncode != 0:
        raise SystemExit(f"dptool {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def help_text() -> str:
    """`dptool --help`, as the CLI prints it now."""
    return cli("--help")


# --- reading the logs of a real run ------------------------------------------------------------------------------

def demo_lines(log: str) -> list[str]:
    """The lines of a `make demo` log the tour shows: the dbt build summary, generate's summary, the ablation."""
    lines = log.splitlines()
    shown = []
    done = [line for line in lines if re.search(r"\bDone\. PASS=\d+", line)]
    if done:
        shown += ["...", re.sub(r"^\d\d:\d\d:\d\d\s+", "", re.sub(r"\x1b\[[0-9;]*m", "", done[-1]).strip())]
    start = next(i for i, line in enumerate(lines) if "dptool generate" in line and line.startswith(".venv"))
    shown.append(lines[start])
    summary = next(i for i in range(start, len(lines)) if re.match(r"\d+ validated tasks in ", lines[i]))
    shown.append("...")
    for line in lines[summary:]:
        shown.append(re.sub(r" in /\S*/bundle$", " in bundle", line))
        if line.startswith("provenance:"):
            break
    ablate = next(i for i in range(summary, len(lines)) if "dptool ablate pairing" in lines[i])
    shown.append(lines[ablate])
    shown += [line for line in lines[ablate:] if re.match(r"\| (graph|similar text|random) \|", line)]
    return shown


def collected() -> int:
    """How many tests pytest collects in this checkout."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly"], cwd=REPO,
                          capture_output=True, text=True, timeout=900)
    found = re.search(r"^(\d+) tests? collected", proc.stdout, re.MULTILINE)
    if not found:
        raise SystemExit(f"pytest --collect-only printed no count: {proc.stdout[-500:]}{proc.stderr[-500:]}")
    return int(found.group(1))


def test_counts(log: str) -> dict:
    """passed, skipped, xfailed and seconds of pytest's last line in a `make test` log."""
    last = [line for line in log.splitlines() if re.search(r"\d+ passed", line)][-1]
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|skipped|xfailed|failed|errors?)\b", last)}
    seconds = re.search(r" in ([\d.]+)s", last)
    return {**counts, "seconds": float(seconds.group(1)) if seconds else None}


# --- the bundle --------------------------------------------------------------------------------------------------

def tasks_of(bundle: Path) -> list[dict]:
    return [json.loads(line) for line in (bundle / "tasks.jsonl").read_text(encoding="utf-8").splitlines() if line]


def per_domain(tasks: list[dict]) -> dict[str, dict[str, int]]:
    counts: dict[str, Counter] = {}
    for t in tasks:
        counts.setdefault(t["domain"], Counter())[t["analysis_type"]] += 1
    return {d: dict(sorted(c.items())) for d, c in sorted(counts.items())}


def example_task(tasks: list[dict], also: set[str]) -> dict:
    """A threshold task of two rules whose gold and base verdicts differ, that the small bundle `also` asks too
    (ids name questions: the test finds it in the test session's bundle)."""
    # Average Delivery Time first: its rules (outliers, São Paulo's clock) read plainly in a tour
    for t in sorted(tasks, key=lambda t: t["metric_ids"] != ["avg_delivery_days"]):
        if (t["analysis_type"] == "threshold_crossing" and len(t["rule_ids"]) == 2 and t["task_id"] in also
                and t["gold"]["result"] != t["base"]["result"]):
            return t
    raise SystemExit("no threshold task of two rules in both bundles: choose the example by hand")


def shortened(task: dict) -> dict:
    """The example as the tour shows it: SQL fields cut to their first 60 characters."""
    return {k: (v[:60] + " ..." if k in SHORTENED and isinstance(v, str) else v) for k, v in task.items()
            if k != "spec"}


# --- record and render --------------------------------------------------------------------------------------------

def _five_rows(src: Path, dest: Path) -> None:
    """gold-sql's answers with every list cut to its first 5 rows: what an agent reading a preview answers."""
    lines = []
    for line in src.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if isinstance(record.get("answer"), list):
            record["answer"] = record["answer"][:5]
        lines.append(json.dumps(record))
    dest.write_text("\n".join(lines) + "\n", encoding="utf-8")


def record(args) -> None:
    """docs/tour.json: what `make demo` and its bundle show (with --demo-log), pytest's counts (with --test-log)."""
    tour = json.loads(TOUR.read_text(encoding="utf-8")) if TOUR.exists() else {}
    if args.demo_log:
        tour.update(record_demo(args))
    if args.test_log:
        tour["tests"] = test_counts(Path(args.test_log).read_text(encoding="utf-8", errors="replace"))
    if args.code:
        tour.update(help=help_text(), tests_collected=collected())
    TOUR.parent.mkdir(exist_ok=True)
    TOUR.write_text(json.dumps(tour, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {TOUR}")


def record_demo(args) -> dict:
    bundle = Path(args.bundle).resolve()
    tasks = tasks_of(bundle)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        # what the test session generates: the demo at the default target (the demo bundle's gold models stay:
        # a project keeps every bundle's)
        small = tmp_path / "small"
        cli("generate", "--project-dir", str(REPO), "--out", str(small), "--quiet")
        also = {t["task_id"] for t in tasks_of(small)}
        answers = tmp_path / "answers"
        answers.mkdir()

        def shown(text: str) -> str:  # the tour's paths, as a user in the repo would type them
            return text.replace(str(answers), "answers").replace(str(tmp_path / "score"), "score").replace(
                str(tmp_path / "compare"), "compare").replace(str(small), "b60").replace(str(bundle), "bundle")

        scores = {}
        for agent in ("gold-sql", "base-sql", "empty"):
            file = answers / f"{agent}.jsonl"
            answered = cli("answer", str(bundle), "--agent", agent, "--out", str(file)).strip()
            scored = cli("score", str(bundle), str(file), "--out", str(tmp_path / "score" / agent))
            scores[agent] = {"answer": shown(answered), "score": shown(scored).splitlines()}
        four = answers / "four.jsonl"
        four.write_text("".join((answers / "gold-sql.jsonl").read_text(encoding="utf-8").splitlines(True)[:4]),
                        encoding="utf-8")
        four_lines = shown(cli("score", str(bundle), str(four), "--out", str(tmp_path / "score" / "four")))
        refused = subprocess.run([sys.executable, "-m", "dptool.cli", "score", str(small),
                                  str(answers / "gold-sql.jsonl"), "--out", str(tmp_path / "score" / "other")],
                                 cwd=REPO, capture_output=True, text=True, timeout=900)
        _five_rows(answers / "gold-sql.jsonl", answers / "gold-sql-5rows.jsonl")
        runs = [str(answers / f"{name}.jsonl") for name in ("gold-sql", "gold-sql-5rows", "base-sql", "empty")]
        compared = shown(cli("compare", *runs, "--bundle", str(bundle), "--out", str(tmp_path / "compare")))
    example = example_task(tasks, also)
    model = example["dbt_node"].rsplit(".", 1)[-1]
    # the gold models are disabled unless dbt's var asks for them: a parse with it gives their depends_on
    from dptool.project.dbt import DbtProject

    DbtProject(REPO).run("parse", gold=True)
    node = json.loads((REPO / "target" / "manifest.json").read_text(encoding="utf-8"))["nodes"][example["dbt_node"]]
    return {
        "help": help_text(),
        "demo": demo_lines(Path(args.demo_log).read_text(encoding="utf-8", errors="replace")),
        "demo_seconds": args.demo_seconds,
        "tasks": len(tasks),
        "per_domain": per_domain(tasks),
        "example": shortened(example),
        "example_model": (REPO / "models" / "dptool_gold" / f"{model}.sql").read_text(encoding="utf-8"),
        "example_depends": {"macros": node["depends_on"]["macros"], "nodes": node["depends_on"]["nodes"]},
        "per_tier": dict(sorted(Counter(t["tier"] for t in tasks).items())),
        "scores": scores,
        "four_lines": four_lines.splitlines(),
        "other_bundle": shown(refused.stderr).strip(),
        "compare": compared.splitlines(),
        "tests_collected": collected(),
    }


def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    return f"{int(seconds // 60)} min {round(seconds % 60):d} s"


TYPE_NAMES = {"comparison": "comparison", "counterfactual": "counterfactual", "decomposition": "decomposition",
              "knowledge_retrieval": "knowledge", "point_query": "point query", "ranking": "ranking",
              "significance_testing": "significance", "threshold_crossing": "threshold", "trend_analysis": "trend"}


KEY_ORDER = ("task_id", "domain", "analysis_type", "tier", "question", "answer_format", "gold", "base", "tolerance",
             "metric_ids", "rule_ids", "rule_types", "rules_in_force", "rule_scope", "dimension", "slice",
             "subgraph_id", "dbt_node", "gold_sql", "base_sql")


def task_json(task: dict) -> str:
    """A task as the tour shows it: one key a line, in the order a reader wants them, each value on its line."""
    keys = sorted(task, key=lambda k: (KEY_ORDER.index(k) if k in KEY_ORDER else len(KEY_ORDER), k))
    lines = [f"  {json.dumps(k)}: {json.dumps(task[k], ensure_ascii=False)}" for k in keys]
    return "{\n" + ",\n".join(lines) + "\n}"


def _number(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _interval(right: int, n: int) -> str:
    from dptool.evaluate.intervals import wilson

    low, high = wilson(right / n, n)
    return f"{100 * low:.1f}–{100 * high:.1f} %"


def ablation(demo: list[str]) -> str:
    """The pairing ablation's shares, from the `| graph | 100 | 96 | 96.0% |` rows of the demo log."""
    rows = [re.match(r"\| (.+?) \| \d+ \| \d+ \| ([\d.]+)% \|", line) for line in demo]
    return ", ".join(f"{m.group(1)} {float(m.group(2)):g} %" for m in rows if m)


def sections(tour: dict) -> dict[str, str]:
    """The text of each marked section of README.md."""
    fence = "```"
    domains = "; ".join(
        f"{d} {sum(c.values()):,} tasks ({', '.join(f'{TYPE_NAMES.get(k, k)} {n}' for k, n in c.items())})"
        for d, c in tour["per_domain"].items())
    example = tour["example"]
    unit = example["answer_format"].get("unit") or ""
    gold, base = example["gold"], example["base"]
    rules = " and ".join(f"`{r}`" for r in example["rule_ids"])
    t = tour["tests"]
    skipped = "".join(f", {t[k]:,} {k}" for k in ("skipped", "xfailed") if t.get(k))
    scores = tour["scores"]
    rule_tasks = tour["per_tier"].get("knowledge+analytics+rule", 0)
    analytics = tour["per_tier"].get("knowledge+analytics", 0)
    model = example["dbt_node"].rsplit(".", 1)[-1]
    return {
        "make-demo": "\n".join([f"{fence}text", f"$ make demo                                   # fresh clone, 2 idle "
                                f"cores: {_minutes(tour['demo_seconds'])}, install included", *tour["demo"], fence]),
        "per-domain": f"Per domain (from `bundle/card.md`): {domains}.",
        "example-task": "\n".join([f"{fence}json", task_json(example), fence]),
        "example-explain": (f"An agent that ignores the rule documents computes the `base` answer "
                            f"({_number(base['value'])} {unit}: {base['result']}); the rules in force, {rules} "
                            f"(their documents are in `kb/`), make it {_number(gold['value'])} {unit}: "
                            f"{gold['result']}. The threshold is chosen between the two, so only an agent that "
                            f"applies the rules passes."),
        "help": "\n".join([f"{fence}text", "$ dptool --help", tour["help"].rstrip("\n"), fence]),
        "scores": "\n".join([f"{fence}text", *[line for agent in ("gold-sql", "base-sql") for line in (
            f"$ dptool answer bundle --agent {agent} --out answers/{agent}.jsonl", scores[agent]["answer"],
            f"$ dptool score bundle answers/{agent}.jsonl --out score/{agent}",
            *(scores[agent]["score"] if agent == "base-sql" else scores[agent]["score"][:3] + ["..."]))], fence]),
        "four-lines": "\n".join([
            f"{fence}text", "$ head -4 answers/gold-sql.jsonl > answers/four.jsonl && dptool score bundle "
            "answers/four.jsonl --out score/four", *tour["four_lines"][:2], "...",
            "$ dptool score b60 answers/gold-sql.jsonl --out score/other", tour["other_bundle"], fence]),
        "compare": "\n".join([f"{fence}text", "$ dptool compare answers/gold-sql.jsonl answers/gold-sql-5rows.jsonl "
                              "answers/base-sql.jsonl answers/empty.jsonl", *tour["compare"], fence]),
        "make-test": f"{t['passed']:,} passed{skipped} in {_minutes(t['seconds'])} of pytest, "
                     f"{tour['tests_collected']:,} tests collected",
        "ablation": ablation(tour["demo"]),
        "example-model": "\n".join([f"{fence}sql", f"-- models/dptool_gold/{model}.sql",
                                     tour["example_model"].rstrip("\n"), fence]),
        "example-depends": "\n".join([f"{fence}json", '"depends_on": ' + json.dumps(tour["example_depends"]), fence]),
        "example-answer": (f'"{example["task_id"]}", "answer": {{"value": {_number(gold["value"])}, '
                           f'"result": "{gold["result"]}"}}'),
        "rule-tasks": f"{rule_tasks:,}",
        "base-intervals": (f"base-sql's 0 of {rule_tasks:,} above reads {_interval(0, rule_tasks)}, not 0.0–0.0 %, "
                           f"and its {analytics:,} of {analytics:,} reads {_interval(analytics, analytics)}"),
        "tasks": f"{tour['tasks']:,}",
    }


def render(readme: str, tour: dict) -> str:
    """README.md with every marked section written from `tour`; an unknown section name is an error."""
    texts = sections(tour)

    def body(match: re.Match) -> str:
        name = match.group("name")
        if name not in texts:
            raise SystemExit(f"no tour section called {name!r}; the sections are {', '.join(texts)}")
        return f"{match.group(1)}{texts[name]}{match.group(4)}"

    return SECTION.sub(body, readme)


def stale(readme: str, tour: dict) -> list[str]:
    """The names of README's marked sections whose text is not what `render` writes from `tour`."""
    texts = sections(tour)
    return sorted({m.group("name") for m in SECTION.finditer(readme) if m.group("body") != texts.get(m.group("name"))})


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.readme", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="docs/tour.json from a real run's logs and bundle")
    rec.add_argument("--bundle", default="bundle")
    rec.add_argument("--demo-log", help="what `make demo` printed: the demo's parts of the tour again")
    rec.add_argument("--demo-seconds", type=float, help="seconds `make demo` took")
    rec.add_argument("--test-log", help="what `make test` printed: pytest's counts again")
    rec.add_argument("--code", action="store_true",
                     help="what the code gives now without a demo run: the command list, the tests collected")
    sub.add_parser("render", help="the tour sections of README.md and docs/*.md from docs/tour.json")
    sub.add_parser("check", help="name the tour sections of README.md and docs/*.md that docs/tour.json does not give")
    args = parser.parse_args()
    if args.command == "record":
        record(args)
        return
    tour = json.loads(TOUR.read_text(encoding="utf-8"))
    if args.command == "check":
        names = stale(pages_text(), tour)
        if names:
            raise SystemExit(f"README.md, docs/*.md: tour sections not as docs/tour.json gives them: "
                             f"{', '.join(names)}; run `python -m tests.readme render`")
        print("README.md, docs/*.md: every tour section is as docs/tour.json gives it")
    else:
        for page in PAGES:
            text = page.read_text(encoding="utf-8")
            rendered = render(text, tour)
            if rendered != text:
                page.write_text(rendered, encoding="utf-8")
                print(f"wrote {page.relative_to(REPO)}")


if __name__ == "__main__":
    main()
