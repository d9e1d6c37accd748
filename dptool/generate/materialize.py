"""Stage 5: write one gold model per candidate, build them with dbt in one run, keep what passed."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import yaml

from dptool.generate.instantiate import Candidate
from dptool.project.catalog import Catalog
from dptool.project.dbt import DbtProject

GOLD_DIR = Path("models") / "dptool_gold"
GOLD_TAG = "dptool_gold"
NO_EFFECT = "the rule does not change the answer"
HEADER = "-- written by `dptool generate`; do not edit (the next run rewrites this folder)\n"


@dataclass
class Built:
    """A candidate whose gold model built and whose rule test passed."""

    candidate: Candidate
    unique_id: str
    relation_name: str
    compiled_sql: str


def model_sql(c: Candidate, catalog: Catalog | None = None) -> str:
    """The one-line gold model of a candidate: a call of dptool.gold with Jinja literals.

    With the catalog, a composite's rules go to the metrics they modify (`Catalog.rules_argument`).
    """
    def rules(ids) -> list | dict:
        return catalog.rules_argument(c.metric, ids) if catalog is not None else list(ids)

    args = [f"metric={jinja_literal(c.metric)}", f"rules={jinja_literal(rules(c.rules))}",
            f"where={jinja_literal(c.where)}"]
    if c.group_by:
        args.append(f"group_by={jinja_literal(c.group_by)}")
    args.append(f"shape={jinja_literal(c.shape)}")
    if c.k is not None:
        args.append(f"k={c.k}")
    if c.min_rows is not None:
        args.append(f"min_rows={c.min_rows}")
    if c.period is not None:
        args.append(f"period={c.period}")  # already a Jinja expression (e.g. dbt.date_trunc(...))
    if c.base_rules:
        args.append(f"base_rules={jinja_literal(rules(c.base_rules))}")
    config = "{{ config(materialized='table', schema='dptool_gold', tags=['" + GOLD_TAG + "']) }}\n"
    return HEADER + config + "{{ dptool.gold(" + ", ".join(args) + ") }}\n"


def jinja_literal(value) -> str:
    # JSON string and list literals are valid Jinja literals. Non-ASCII stays raw: Jinja decodes the
    # escapes of a literal one by one, so an escaped surrogate pair would come back as two halves.
    return json.dumps(value, ensure_ascii=False)


def properties(candidates: list[Candidate], catalog: Catalog, questions: dict[str, str] | None = None,
               tests: bool = True) -> dict:
    """The properties file of the gold models: description, task meta, rule docs and (with `tests`) the
    rule test."""
    models = []
    for c in candidates:
        metric = catalog.metrics[c.metric]
        question = (questions or {}).get(c.task_id) or f"{c.analysis_type.replace('_', ' ')} of {metric.label}"
        lines = [question, "", f"Metric: {metric.label} — {metric.formula}"]
        # the rules the task names and every rule its gold applies (a counterfactual keeps the others in force)
        for rule_id in dict.fromkeys([*c.skeleton.rules, *c.rules]):
            lines += ["", f"### Rule: {catalog.rules[rule_id].title}", "", '{{ doc("rule__' + rule_id + '") }}']
        entry = {
            "name": c.task_id,
            "description": "\n".join(lines),
            "config": {"meta": {"dptool": {"task": {
                "analysis_type": c.analysis_type, "metric": c.metric, "rules": list(c.skeleton.rules),
                "dimension": c.dimension_column, "slice": c.slice,
            }}}},
        }
        if tests and (c.rules or c.base_rules):  # a counterfactual withdraws a rule: its base applies it
            entry["data_tests"] = [{"dptool.rule_changes_answer": {"arguments": {"variants": ["gold"]}}}]
        models.append(entry)
    return {"version": 2, "models": models}


def write_properties(project: DbtProject, candidates, catalog, questions=None, tests: bool = True) -> None:
    path = project.project_dir / GOLD_DIR / "_dptool_gold.yml"
    text = yaml.safe_dump(properties(candidates, catalog, questions, tests), sort_keys=False, allow_unicode=True,
                          width=100)
    path.write_text("# written by `dptool generate`; do not edit\n" + text, encoding="utf-8")


def materialize(project: DbtProject, candidates: list[Candidate], catalog: Catalog, keep: list[Candidate] = (),
                on_node_done=None, run_tests: bool = True) -> tuple[list[Built], dict]:
    """Write the gold models, build them in one dbt run, delete the files of every failure.

    `keep` are the candidates of earlier rounds, whose models stay as they are; with none, the folder
    starts empty. Without `run_tests`, dbt runs the models only (the caller checks what the rule tests
    would: `rows_differ`); the tests stay declared for the user's `dbt build`. Returns the built
    candidates and, per dropped task id, the reason.
    """
    folder = project.project_dir / GOLD_DIR
    if not keep and folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for c in candidates:
        (folder / f"{c.task_id}.sql").write_text(model_sql(c, catalog), encoding="utf-8")
    # without run_tests, the tests are declared once the last round is done: dbt need not parse a test
    # node per rule task in every round
    write_properties(project, [*keep, *candidates], catalog, tests=run_tests)
    if not candidates:
        return [], {}

    results = project.run("build" if run_tests else "run", "--select", *[c.task_id for c in candidates],
                          on_node_done=on_node_done)
    by_model = {r.unique_id: r for r in results if r.resource_type == "model"}
    failed_tests = {r.attached_node: r for r in results if r.resource_type == "test" and r.status != "pass"}
    built, dropped = [], {}
    name = _project_name(project)
    for c in candidates:
        uid = f"model.{name}.{c.task_id}"
        model = by_model.get(uid)
        if model is None or model.status != "success":
            status, message = (model.status, model.message) if model else ("not run", "")
            dropped[c.task_id] = f"model {status}" + (f": {message}" if message else "")
        elif uid in failed_tests and failed_tests[uid].status == "error":  # the test's SQL failed: not a verdict
            dropped[c.task_id] = f"rule test error: {failed_tests[uid].message}"
        elif uid in failed_tests:
            dropped[c.task_id] = NO_EFFECT
        else:
            built.append(Built(c, uid, model.relation_name or "", model.compiled_code or ""))
            continue
        (folder / f"{c.task_id}.sql").unlink()
    write_properties(project, [*keep, *(b.candidate for b in built)], catalog, tests=run_tests)
    return built, dropped


def rows_differ(columns: list[str], rows: list[tuple], precision: int = 9) -> bool:
    """What the rule test `dptool.rule_changes_answer` checks, on the rows read back: do the gold
    variant's rows differ from the base's (a multiset, numbers rounded to `precision` digits)?"""
    def norm(row: tuple) -> tuple:
        return tuple(round(float(v), precision) if isinstance(v, int | float | Decimal) and not isinstance(v, bool)
                     else v for v in row)

    index = columns.index("variant")
    sides = {"base": Counter(), "gold": Counter()}
    for row in rows:
        sides.setdefault(row[index], Counter())[norm(row[:index] + row[index + 1:])] += 1
    return sides["gold"] != sides["base"]


def _project_name(project: DbtProject) -> str:
    return yaml.safe_load((project.project_dir / "dbt_project.yml").read_text(encoding="utf-8"))["name"]
