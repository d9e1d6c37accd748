"""Stage 5: each candidate's gold query written by dbt and run on the target; what the rule changes is kept.

dbt writes every gold query: the gold models of a round (`model_sql`) are compiled together in one
`dbt compile` (dptool.project.batch), and the SQL dbt writes for each runs through the target's own
connection, a few queries at a time. Nothing is built: the rows read are checked as the rule test checks
them (`rows_differ`). The gold models stay dbt models: `write_models` writes those kept, with their rule
tests, so that the user's `dbt build --select tag:dptool_gold` materializes them and runs the tests.
"""

from __future__ import annotations

import json
import math
import shutil
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import yaml

from dptool.generate.instantiate import Candidate
from dptool.project.batch import compile_texts
from dptool.project.catalog import Catalog
from dptool.project.dbt import Connection, DbtProject
from dptool.project.warehouse import Warehouse

GOLD_DIR = Path("models") / "dptool_gold"
GOLD_TAG = "dptool_gold"
NO_EFFECT = "the rule does not change the answer"
HEADER = "-- written by `dptool generate`; do not edit (the next run rewrites this folder)\n"


@dataclass
class Built:
    """A candidate whose gold query dbt compiled and the target ran, with the rows it gave."""

    candidate: Candidate
    unique_id: str  # of its gold model, once written
    compiled_sql: str  # what dbt writes for its gold model: own_sql with the `injected` CTEs in front
    own_sql: str
    injected: tuple[tuple[str, str], ...]  # (name, SQL) of each ephemeral model it reads, in dbt's order
    columns: list[str]
    rows: list[tuple]


def model_sql(c: Candidate) -> str:
    """The one-line gold model of a candidate: a call of dptool.gold with Jinja literals."""
    args = [f"metric={jinja_literal(c.metric)}", f"rules={jinja_literal(list(c.rules))}",
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
        args.append(f"base_rules={jinja_literal(list(c.base_rules))}")
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
        for rule_id in c.skeleton.rules:
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


def materialize(project: DbtProject, candidates: list[Candidate], connection: Connection,
                on_done: Callable[[int], None] | None = None) -> Iterator[tuple[Candidate, Built | str]]:
    """Each candidate, in the order given, with its Built or the reason it was dropped.

    One `dbt compile` writes every gold query; the target runs them while the caller reads the rows of
    those done. A candidate is dropped when its model does not compile, its query fails, or the rule it
    applies does not change its rows. `on_done(n)` is called as n more queries are compiled or run.
    """
    name = _project_name(project)
    # a batch injects the metric models of all its texts: texts of one metric together keep it short
    order = sorted(candidates, key=lambda c: (c.metric, c.task_id))
    compiled = compile_texts(project, {c.task_id: model_sql(c) for c in order}, on_done)
    runnable = [c for c in candidates if compiled[c.task_id].sql is not None]
    with Warehouse.of(connection) as wh:
        results = wh.query_each(compiled[c.task_id].sql for c in runnable)
        for c in candidates:
            done = compiled[c.task_id]
            if done.sql is None:
                yield c, f"model error: {done.error}"
                continue
            result = next(results)
            if on_done:
                on_done(1)
            if isinstance(result, Exception):
                yield c, f"model error: {result}"
                continue
            columns, rows = result
            if (c.rules or c.base_rules) and not rows_differ(columns, rows):  # a counterfactual's base applies it
                yield c, NO_EFFECT
                continue
            own, injected = (done.own_sql, done.injected) if done.injected is not None else (done.sql, ())
            yield c, Built(c, f"model.{name}.{c.task_id}", done.sql, own, injected, columns, rows)


def remove_models(project: DbtProject) -> None:
    """Remove the gold models of an earlier run: dbt need not parse them while this run compiles its own."""
    shutil.rmtree(project.project_dir / GOLD_DIR, ignore_errors=True)


def write_models(project: DbtProject, candidates: list[Candidate], catalog: Catalog,
                 questions: dict[str, str] | None = None) -> None:
    """Write the gold model of each candidate kept and their properties, rule tests included, in place of
    any earlier ones: what the user's `dbt build --select tag:dptool_gold` builds and tests."""
    folder = project.project_dir / GOLD_DIR
    remove_models(project)
    folder.mkdir(parents=True)
    for c in candidates:
        (folder / f"{c.task_id}.sql").write_text(model_sql(c), encoding="utf-8")
    write_properties(project, candidates, catalog, questions)


def rows_differ(columns: list[str], rows: list[tuple], precision: int = 9) -> bool:
    """What the rule test `dptool.rule_changes_answer` checks, on the rows read back: do the gold
    variant's rows differ from the base's, as multisets?

    Numbers differ only beyond `precision` digits, both absolute and relative to their size: DuckDB sums
    doubles in thread order, so a sum in the millions can change in its 9th decimal from one run to the
    next, and a rule that changes nothing must not pass for one that does. Whatever differs here differs
    after the test's rounding too, so `dbt build` passes the rule test of every task kept.
    """
    index = columns.index("variant")
    sides: dict[str, list[tuple]] = {"base": [], "gold": []}
    for row in rows:
        sides.setdefault(row[index], []).append(row[:index] + row[index + 1:])
    return not same_rows(sides["base"], sides["gold"], precision)


def same_rows(a: list[tuple], b: list[tuple], precision: int = 9) -> bool:
    """Are two lists of rows the same multiset, numbers equal up to `precision` digits (see rows_differ)?"""
    if len(a) != len(b):
        return False
    tolerance = 10.0 ** -precision

    def split(rows: list[tuple]) -> dict[tuple, list[tuple]]:
        # rows are paired by their other values; numbers (a group's value, rank, mean) sort within a pair
        groups = defaultdict(list)
        for row in rows:
            key, numbers = [], []
            for v in row:
                if isinstance(v, int | float | Decimal) and not isinstance(v, bool) and not math.isnan(v):
                    key.append(_NUMBER)
                    numbers.append(float(v))
                else:
                    key.append(v if isinstance(v, Hashable) else repr(v))
            groups[tuple(key)].append(tuple(numbers))
        return groups

    left, right = split(a), split(b)
    if left.keys() != right.keys():
        return False
    for key, numbers in left.items():
        other = right[key]
        if len(numbers) != len(other):
            return False
        for x, y in zip(sorted(numbers), sorted(other), strict=True):
            if any(abs(u - v) > tolerance * max(1.0, abs(u), abs(v)) for u, v in zip(x, y, strict=True)):
                return False
    return True


_NUMBER = object()  # stands for a number in the key that pairs rows


def _project_name(project: DbtProject) -> str:
    return yaml.safe_load((project.project_dir / "dbt_project.yml").read_text(encoding="utf-8"))["name"]
