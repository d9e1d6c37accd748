"""The README's tour, written from a real run: `python -m tests.readme record` then `render`.

`record` reads what a real `make demo` and `make test` printed (their logs), the demo bundle they wrote, and runs
the few cheap commands the tour shows (`dptool --help`, the reference agents and their scores), into
docs/tour.json. `render` writes each marked section of README.md from docs/tour.json:

    <!-- tour:NAME -->
    ...written by tests/readme.py...
    <!-- /tour:NAME -->

tests/test_readme.py fails when a section differs from what `render` writes (a number changed by hand), and when
what the code produces now (the command list, the example task in the test session's bundle, the number of
tests) is not what docs/tour.json recorded. `make readme` runs the whole of it.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOUR = REPO / "docs" / "tour.json"
README = REPO / "README.md"
SECTION = re.compile(r"(<!-- tour:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /tour:(?P=name) -->)", re.DOTALL)
SHORTENED = ("gold_sql", "base_sql")  # SQL fields of the example task, cut to their start


def cli(*args: str, cwd: Path = REPO) -> str:
    """What `dptool ARGS` prints, from this checkout."""
    proc = subprocess.run([sys.executable, "-m", "dptool.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900)
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
        shown += ["...", re.sub(r"^\S*\s*\x1b\[0m|\x1b\[[0-9;]*m", "", done[-1]).strip()]
    start = next(i for i, line in enumerate(lines) if "dptool generate" in line and line.startswith(".venv"))
    shown.append(lines[start])
    summary = next(i for i in range(start, len(lines)) if re.match(r"\d+ validated tasks in ", lines[i]))
    shown.append("...")
    for line in lines[summary:]:
        if line.startswith("provenance:"):
            break
        shown.append(re.sub(r" in /\S*/bundle$", " in bundle", line))
    ablate = next(i for i in range(summary, len(lines)) if "dptool ablate pairing" in lines[i])
    shown.append(lines[ablate])
    shown += [line for line in lines[ablate:] if re.match(r"\| (graph|similar text|random) \|", line)]
    return shown


def demo_seconds(time_log: str) -> float | None:
    """`real` of `time make demo`."""
    found = re.search(r"real\s+(\d+)m([\d.]+)s", time_log)
    return int(found.group(1)) * 60 + float(found.group(2)) if found else None


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
    for t in tasks:
        if (t["analysis_type"] == "threshold_crossing" and len(t["rule_ids"]) == 2 and t["task_id"] in also
                and t["gold"]["result"] != t["base"]["result"]):
            return t
    raise SystemExit("no threshold task of two rules in both bundles: choose the example by hand")


def shortened(task: dict) -> dict:
    """The example as the tour shows it: SQL fields cut to their first 60 characters."""
    return {k: (v[:60] + " ..." if k in SHORTENED and isinstance(v, str) else v) for k, v in task.items()
            if k != "spec"}


# --- record and render --------------------------------------------------------------------------------------------

def record(args) -> None:
    bundle = Path(args.bundle)
    tasks = tasks_of(bundle)
    with tempfile.TemporaryDirectory() as tmp:
        # what the test session generates: the demo at the default target (the demo bundle's gold models stay:
        # a project keeps every bundle's)
        small = Path(tmp) / "small"
        cli("generate", "--project-dir", str(REPO), "--out", str(small), "--quiet")
        also = {t["task_id"] for t in tasks_of(small)}
        scores = {}
        for agent in ("gold-sql", "base-sql"):
            answers = Path(tmp) / f"{agent}.jsonl"
            answered = cli("answer", str(bundle), "--agent", agent, "--out", str(answers)).strip()
            scored = cli("score", str(bundle), str(answers), "--out", str(Path(tmp) / agent))
            scores[agent] = {"answer": answered.replace(str(answers), f"answers/{agent}.jsonl"),
                             "score": [line for line in scored.splitlines() if not line.startswith("wrote ")]}
    tour = {
        "help": help_text(),
        "demo": demo_lines(Path(args.demo_log).read_text(encoding="utf-8", errors="replace")),
        "demo_seconds": demo_seconds(Path(args.demo_time).read_text(encoding="utf-8")) if args.demo_time else None,
        "tasks": len(tasks),
        "per_domain": per_domain(tasks),
        "example": shortened(example_task(tasks, also)),
        "scores": scores,
        "tests": test_counts(Path(args.test_log).read_text(encoding="utf-8", errors="replace")),
        "tests_collected": args.collected,
    }
    TOUR.parent.mkdir(exist_ok=True)
    TOUR.write_text(json.dumps(tour, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {TOUR}")


def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    return f"{int(seconds // 60)} min {round(seconds % 60):d} s"


TYPE_NAMES = {"comparison": "comparison", "counterfactual": "counterfactual", "decomposition": "decomposition",
              "knowledge_retrieval": "knowledge", "point_query": "point query", "ranking": "ranking",
              "significance_testing": "significance", "threshold_crossing": "threshold", "trend_analysis": "trend"}


def sections(tour: dict) -> dict[str, str]:
    """The text of each marked section of README.md."""
    fence = "```"
    domains = "; ".join(
        f"{d} {sum(c.values()):,} tasks ({', '.join(f'{TYPE_NAMES.get(k, k)} {n}' for k, n in c.items())})"
        for d, c in tour["per_domain"].items())
    example = tour["example"]
    t = tour["tests"]
    skipped = f", {t['skipped']} skipped" if t.get("skipped") else ""
    return {
        "make-demo": "\n".join([f"{fence}text", f"$ make demo                                   # fresh clone, 2 idle "
                                f"cores: {_minutes(tour['demo_seconds'])}, install included", *tour["demo"], fence]),
        "per-domain": f"Per domain (from `bundle/card.md`): {domains}.",
        "example-task": "\n".join([f"{fence}json", json.dumps(example, indent=2, ensure_ascii=False), fence]),
        "example-id": f"`{example['task_id']}`",
        "help": "\n".join([f"{fence}text", "$ dptool --help", tour["help"].rstrip("\n"), fence]),
        "scores": "\n".join([f"{fence}text", *[line for agent, s in tour["scores"].items() for line in (
            f"$ dptool answer bundle --agent {agent} --out answers/{agent}.jsonl", s["answer"],
            f"$ dptool score bundle answers/{agent}.jsonl --out score/{agent}",
            *(s["score"] if agent == "base-sql" else s["score"][:2] + ["..."]))], fence]),
        "make-test": f"{t['passed']:,} passed{skipped} in {_minutes(t['seconds'])} of pytest, "
                     f"{tour['tests_collected']:,} tests collected",
    }


def render(readme: str, tour: dict) -> str:
    """README.md with every marked section written from `tour`; an unknown section name is an error."""
    texts = sections(tour)

    def body(match: re.Match) -> str:
        name = match.group("name")
        if name not in texts:
            raise SystemExit(f"README.md: no tour section called {name!r}; the sections are {', '.join(texts)}")
        return f"{match.group(1)}{texts[name]}\n{match.group(4)}"

    return SECTION.sub(body, readme)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.readme", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="docs/tour.json from a real run's logs and bundle")
    rec.add_argument("--bundle", default="bundle")
    rec.add_argument("--demo-log", required=True, help="what `make demo` printed")
    rec.add_argument("--demo-time", help="what `time make demo` printed on stderr")
    rec.add_argument("--test-log", required=True, help="what `make test` printed")
    rec.add_argument("--collected", type=int, required=True, help="tests pytest collects (pytest --collect-only)")
    sub.add_parser("render", help="README.md's tour sections from docs/tour.json")
    args = parser.parse_args()
    if args.command == "record":
        record(args)
    else:
        tour = json.loads(TOUR.read_text(encoding="utf-8"))
        README.write_text(render(README.read_text(encoding="utf-8"), tour), encoding="utf-8")
        print(f"wrote {README}")


if __name__ == "__main__":
    main()
