"""`dptool ablate pairing`: DI-Bench Table 8 — does the graph pick rules that change answers?

Every rule task's metric is paired again with three rules: the graph's (the task's own rule), the most
similar other rule by text (BM25 over the rule documents), and a random other rule. Each pairing's gold query
(base next to the paired rule) is compiled by dbt, as generate compiles its candidates (dptool.project.batch),
and run on the target: nothing is built, so no table or schema is left behind. The share of pairings whose
answer changes is reported per strategy. A pairing that cannot apply (the rule names a column the metric
lacks, its query fails) does not change the answer.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from rank_bm25 import BM25Okapi

from dptool.errors import DptoolError
from dptool.generate.materialize import rows_differ
from dptool.outdir import BUNDLE, update_files
from dptool.progress import progressbar
from dptool.project.batch import compile_texts
from dptool.project.catalog import Catalog
from dptool.project.dbt import DbtProject
from dptool.project.warehouse import Warehouse

STRATEGIES = ("graph", "similar text", "random")
# where pairings were once written as models and built: a run killed then left them, which the project lock clears
FOLDER = Path("models") / "dptool_ablation"
_WORD = re.compile(r"[a-z0-9]+")


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def pairings(tasks: list[dict], catalog: Catalog, seed: int, limit: int | None = None) -> list[dict]:
    """(task, strategy, rule) triples for every rule task whose rules are in the catalog; with `limit`, for
    that many spread evenly over the bundle (task ids run domain by domain: the first N would be one domain)."""
    rule_ids = sorted(catalog.rules)
    bm25 = BM25Okapi([_tokens(catalog.rules[r].document) for r in rule_ids])
    eligible = [t for t in tasks if t.get("spec") and t["rule_ids"] and t["analysis_type"] != "counterfactual"
                and t["rule_ids"][0] in catalog.rules and len(rule_ids) > 1]
    if limit is not None and len(eligible) > limit:
        eligible = [eligible[i * len(eligible) // limit] for i in range(limit)]
    out = []
    for task in eligible:
        spec = task["spec"]
        own = task["rule_ids"][0]
        others = [r for r in rule_ids if r != own]
        scores = bm25.get_scores(_tokens(catalog.rules[own].document))
        similar = max(others, key=lambda r: (scores[rule_ids.index(r)], r))
        rng = random.Random(f"{seed}:{task['task_id']}")
        for strategy, rule in zip(STRATEGIES, (own, similar, rng.choice(others)), strict=True):
            out.append({"task_id": task["task_id"], "strategy": strategy, "rule": rule, "spec": spec})
    return out


def _model_sql(p: dict, catalog: Catalog) -> str:
    spec = p["spec"]
    rules = catalog.rules_argument(spec["metric"], [p["rule"]]) if spec["metric"] in catalog.metrics else [p["rule"]]
    args = [f"metric={json.dumps(spec['metric'])}", f"rules={json.dumps(rules)}",
            f"where={json.dumps(spec['where'], ensure_ascii=False)}", f"group_by={json.dumps(spec['group_by'])}",
            f"shape={json.dumps(spec['shape'])}"]
    for key in ("k", "min_rows"):
        if spec.get(key) is not None:
            args.append(f"{key}={spec[key]}")
    if spec.get("period"):
        args.append(f"period={spec['period']}")
    return "{{ dptool.gold(" + ", ".join(args) + ") }}\n"


def run_pairing(project: DbtProject, catalog: Catalog, tasks: list[dict], seed: int = 42,
                limit: int | None = None, echo: Callable[[str], None] = lambda _: None,
                progress: bool = False) -> dict:
    """Compile and run every pairing's gold query and count, per strategy, the pairings that change the answer.

    `echo` is told what runs (a stage line, as generate's); with `progress`, a bar on stderr counts its steps."""
    plan = pairings(tasks, catalog, seed, limit)
    if not plan:
        raise DptoolError("the bundle has no rule task with a stored spec to re-pair")
    echo(f"[ablate] dbt compile of {len(plan)} pairings ({len(plan) // len(STRATEGIES)} rule tasks, "
         f"{len(STRATEGIES)} rules each), their SQL run on the target")
    for i, p in enumerate(plan, start=1):
        p["model"] = f"a_{i:04d}"
        p["changes"] = False
    # texts of one metric together: a batch injects the metric models of all its texts
    order = sorted(plan, key=lambda p: (p["spec"]["metric"], p["model"]))
    # two steps per pairing: compiled, run
    with progressbar(length=2 * len(plan), label="  pairings", file=sys.stderr if progress else _Null()) as bar:
        compiled = compile_texts(project, {p["model"]: _model_sql(p, catalog) for p in order}, bar.update)
        runnable = [p for p in plan if compiled[p["model"]].sql is not None]
        bar.update(len(plan) - len(runnable))  # a pairing that does not compile runs nothing
        # the queries closed as soon as the loop ends, by an error or Ctrl-C too: those still running stop
        with Warehouse.of(project.connection()) as wh, \
                closing(wh.query_shared(compiled[p["model"]].query for p in runnable)) as results:
            for p, result in zip(runnable, results, strict=True):
                bar.update(1)
                p["changes"] = not isinstance(result, Exception) and rows_differ(*result)
    table = {}
    for strategy in STRATEGIES:
        chosen = [p for p in plan if p["strategy"] == strategy]
        table[strategy] = {"pairings": len(chosen), "changed": sum(p["changes"] for p in chosen),
                           "share": round(sum(p["changes"] for p in chosen) / len(chosen), 4) if chosen else 0.0}
    return {"strategies": table, "pairings": [{k: p[k] for k in ("task_id", "strategy", "rule", "changes")}
                                              for p in plan]}


def markdown(result: dict) -> str:
    rows = ["## Pairing ablation (DI-Bench Table 8)", "",
            "Each rule task's metric re-paired with a rule, re-executed by dbt: the share of pairings whose",
            "answer changes.", "", "| pairing | pairings | answer changed | share |", "| --- | ---: | ---: | ---: |"]
    for strategy, r in result["strategies"].items():
        rows.append(f"| {strategy} | {r['pairings']} | {r['changed']} | {r['share'] * 100:.1f}% |")
    return "\n".join(rows) + "\n"


def update_bundle(bundle: Path, result: dict) -> None:
    """Write ablation.json and put the table into card.md, each file replaced in one rename and recorded in the
    bundle's marker (dptool.outdir): a bundle's file that changed since dptool wrote it is refused."""
    card = (bundle / "card.md").read_text(encoding="utf-8")
    card = card.split("\n## Pairing ablation")[0].rstrip("\n") + "\n\n" + markdown(result)
    update_files(bundle, BUNDLE, {"ablation.json": json.dumps(result, indent=2, sort_keys=True) + "\n",
                                  "card.md": card})


class _Null:
    """A file that swallows the bar (no progress asked for)."""

    def write(self, _):
        pass

    def flush(self):
        pass
