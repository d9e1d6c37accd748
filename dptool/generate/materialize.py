"""Stage 5: write one gold model per candidate, build them with dbt in one run, keep what passed."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import yaml
from sqlglot import exp

from dptool.generate.instantiate import Candidate
from dptool.project.catalog import Catalog
from dptool.project.dbt import DbtProject
from dptool.sql import literal

GOLD_DIR = Path("models") / "dptool_gold"
GOLD_TAG = "dptool_gold"
GOLD_SCHEMA = "dptool_gold"
GOLD_GROUP = "dptool_gold"
OVERVIEW = "dptool_tasks"
GROUP = {"name": GOLD_GROUP, "owner": {"name": "dptool generate"},
         "description": f"The gold models of the benchmark, one per task, and their overview `{OVERVIEW}`."}
OVERVIEW_COLUMNS = ("task_id", "analysis_type", "metric", "rules")
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
    """The gold model of a candidate: a call of dptool.gold with Jinja literals, then its rules' lineage.

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
    config = ("{{ config(materialized='table', schema='" + GOLD_SCHEMA + "', tags=['" + GOLD_TAG + "'], group='"
              + GOLD_GROUP + "', docs={'show': false}) }}\n")
    return HEADER + config + "{{ dptool.gold(" + ", ".join(args) + ") }}\n" + lineage_sql(c.metric, applied_rules(c))


def applied_rules(c: Candidate) -> list[str]:
    """Every rule the gold model applies, to either variant (a counterfactual's base applies the withdrawn one)."""
    return list(dict.fromkeys([*c.base_rules, *c.rules]))


# The keys of the spec dptool.metric_spec builds (dptool/dbt_package/macros/metric_spec.sql), empty.
BLANK_SPEC = {"metric": None, "relation": None, "source_columns": [], "columns": {}, "period": None, "value": "",
              "inputs": [],
              "where": [], "having": [], "group_by": [], "order_by": [], "limit": None}


def lineage_sql(metric: str, rules: list[str]) -> str:
    """Jinja that puts each rule macro in the model's depends_on.macros, so dbt docs link the task to its rules.

    dbt records the macros a model calls itself, not those dptool.gold calls for it (it applies the rules
    through `context`). So each rule is called here too, only while dbt parses (`execute` is false then) and on
    a blank spec: the call leaves no trace in the compiled SQL.
    """
    if not rules:
        return ""
    spec = "{" + ", ".join(f"{jinja_literal(k)}: " + (jinja_literal(metric) if k == "metric" else _jinja_value(v))
                           for k, v in BLANK_SPEC.items()) + "}"
    macros = ", ".join(f"rule__{r}" for r in rules)
    return (LINEAGE_COMMENT + "{%- if not execute %}{% for rule in [" + macros + "] %}{% do rule("
            + jinja_literal(metric) + ", " + spec + ") %}{% endfor %}{% endif %}\n")


LINEAGE_COMMENT = "{#- lineage: each rule is called while dbt parses, so docs list it among this model's macros -#}\n"


def _jinja_value(value) -> str:
    return "none" if value is None else jinja_literal(value)


def jinja_literal(value) -> str:
    # JSON string and list literals are valid Jinja literals. Non-ASCII stays raw: Jinja decodes the
    # escapes of a literal one by one, so an escaped surrogate pair would come back as two halves.
    return json.dumps(value, ensure_ascii=False)


def properties(candidates: list[Candidate], catalog: Catalog, questions: dict[str, str] | None = None,
               tests: bool = True) -> dict:
    """The properties file of the gold models: their group; per task its description (question, metric, rules
    with links to their pages in dbt docs, rule documents), task meta and (with `tests`) the rule test; and
    the overview model, whose page lists every task."""
    models = []
    for c in candidates:
        metric = catalog.metrics[c.metric]
        lines = [_jinja_text(_question(c, catalog, questions)), "",
                 f"Metric: {metric.label} — {metric.formula} ({_link(c.metric, metric.unique_id, 'model')})"]
        # the rules the task names and every rule its gold applies (a counterfactual keeps the others in force)
        for rule_id in dict.fromkeys([*c.skeleton.rules, *c.rules]):
            rule = catalog.rules[rule_id]
            lines += ["", f"### Rule: {rule.title}", "", f"Macro: {_link('rule__' + rule_id, rule.unique_id, 'macro')}",
                      "", '{{ doc("rule__' + rule_id + '") }}']
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
    if candidates:
        models.append(_overview_properties(candidates, catalog, questions))
    return {"version": 2, "groups": [GROUP], "models": models}


def _question(c: Candidate, catalog: Catalog, questions: dict[str, str] | None) -> str:
    return (questions or {}).get(c.task_id) or \
        f"{c.analysis_type.replace('_', ' ')} of {catalog.metrics[c.metric].label}"


def _link(text: str, unique_id: str, kind: str) -> str:
    """A markdown link to a node's page in dbt docs (`#!/model/<unique_id>`, `#!/macro/<unique_id>`)."""
    return f"[{text}](#!/{kind}/{unique_id})"


def _jinja_text(text: str) -> str:
    """Text that dbt renders as Jinja (a description) and must show as it is."""
    if not any(mark in text for mark in ("{{", "{%", "{#")):
        return text
    return "{% raw %}" + text.replace("{% endraw %}", "{ % endraw % }") + "{% endraw %}"


def _overview_properties(candidates: list[Candidate], catalog: Catalog, questions: dict[str, str] | None) -> dict:
    rows = ["| task | question | metric | rules |", "| --- | --- | --- | --- |"]
    for c in candidates:
        metric = catalog.metrics[c.metric]
        rules = ", ".join(_link(catalog.rules[r].title, catalog.rules[r].unique_id, "macro") for r in c.skeleton.rules)
        question = _jinja_text(_question(c, catalog, questions)).replace("|", "\\|").replace("\n", " ")
        rows.append(f"| {_link(c.task_id, f'model.{catalog.project}.{c.task_id}', 'model')} | {question} | "
                    f"{_link(metric.label, metric.unique_id, 'model')} | {rules or '—'} |")
    text = "\n".join([
        f"The {len(candidates)} tasks of the benchmark `dptool generate` wrote: one gold model each, hidden from the "
        f"navigation and search of these docs (follow a task's link). A task's page holds its question, its metric "
        f"and rule documents, its compiled SQL (the base and the rule-modified query side by side) and, among its "
        f"dependencies, the rule macros it applies. Build them all: `dbt build --selector {GOLD_GROUP}`.", "", *rows])
    return {"name": OVERVIEW, "description": text,
            "columns": [{"name": name} for name in OVERVIEW_COLUMNS]}


def overview_sql(candidates: list[Candidate]) -> str:
    """The overview model: one row per task; it depends on every metric the tasks ask about."""
    # one select per task, joined as text: a union of a thousand selects is too deep a tree to print
    query = "\nUNION ALL\n".join(exp.select(*[literal(v).as_(k) for k, v in zip(OVERVIEW_COLUMNS, (
        c.task_id, c.analysis_type, c.metric, ", ".join(c.skeleton.rules)), strict=True)]).sql(pretty=True)
        for c in candidates)
    metrics = sorted({c.metric for c in candidates})
    return (HEADER + "{{ config(materialized='view', schema='" + GOLD_SCHEMA + "', tags=['" + GOLD_TAG
            + "'], group='" + GOLD_GROUP + "') }}\n"
            + "{#- lineage: every metric the tasks ask about, declared while dbt parses (a ref of an ephemeral model "
              "at run time would inline it) -#}\n"
            + "{%- if not execute %}{% for metric in " + jinja_literal(metrics) + " %}{% do ref(metric) %}{% endfor %}"
              "{% endif %}\n"
            + "{% raw %}" + query + "{% endraw %}\n")


def write_properties(project: DbtProject, candidates, catalog, questions=None, tests: bool = True) -> None:
    """Write the properties file of the gold models and their overview model (none without candidates)."""
    folder = project.project_dir / GOLD_DIR
    text = yaml.safe_dump(properties(candidates, catalog, questions, tests), sort_keys=False, allow_unicode=True,
                          width=100)
    (folder / "_dptool_gold.yml").write_text("# written by `dptool generate`; do not edit\n" + text, encoding="utf-8")
    overview = folder / f"{OVERVIEW}.sql"
    if candidates:
        overview.write_text(overview_sql(candidates), encoding="utf-8")
    else:
        overview.unlink(missing_ok=True)


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
