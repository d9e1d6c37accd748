"""Stage 5: each candidate's gold query written by dbt and run on the target; what the rule changes is kept.

dbt writes every gold query: the gold models of a round (`model_sql`) are compiled together in one
`dbt compile` (dptool.project.batch), and the SQL dbt writes for each runs through the target's own
connection, a few queries at a time (on DuckDB, each ephemeral model that several of them inline computed
once: Warehouse.query_shared). Nothing is built: the rows read are checked as the rule test checks
them (`rows_differ`). The gold models stay dbt models: `write_models` writes those kept, with their rule
tests, so that the user's `dbt build --select tag:dptool_gold` materializes them and runs the tests.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterator
from contextlib import closing
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import yaml
from sqlglot import exp

from dptool.generate.bundles import served_elsewhere, write_list
from dptool.generate.instantiate import Candidate
from dptool.project.batch import compile_texts
from dptool.project.catalog import Catalog
from dptool.project.dbt import GOLD_VAR, Connection, DbtProject
from dptool.project.warehouse import Warehouse
from dptool.sql import literal

GOLD_DIR = Path("models") / "dptool_gold"
GOLD_TAG = "dptool_gold"
GOLD_SCHEMA = "dptool_gold"
GOLD_GROUP = "dptool_gold"
# gold models are disabled unless the dbt var GOLD_VAR asks for them (see dptool.project.dbt)
ENABLED = "enabled=var('" + GOLD_VAR + "', false), "
OVERVIEW = "dptool_tasks"
GROUP = {"name": GOLD_GROUP, "owner": {"name": "dptool generate"},
         "description": f"The gold models of the benchmark, one per task, and their overview `{OVERVIEW}`."}
OVERVIEW_COLUMNS = ("task_id", "analysis_type", "metric", "rules")
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


def model_sql(c: Candidate, catalog: Catalog | None = None) -> str:
    """The gold model of a candidate: a call of dptool.gold with Jinja literals, then its rules' lineage.

    With the catalog, a composite's rules go to the metrics they modify (`Catalog.rules_argument`).
    """
    config = ("{{ config(" + ENABLED + "materialized='table', schema='" + GOLD_SCHEMA + "', tags=['" + GOLD_TAG
              + "'], group='" + GOLD_GROUP + "', docs={'show': false}) }}\n")
    # a rule that cannot run while dbt parses stays out of the lineage: the project must still parse
    rules = [r for r in applied_rules(c) if catalog is None or r not in catalog.rules or catalog.rules[r].parses]
    return HEADER + config + gold_call(c, catalog) + "\n" + lineage_sql(c.metric, rules)


def compile_text(c: Candidate, catalog: Catalog | None = None) -> str:
    """What materialize has dbt compile for a candidate: its gold model without the config() call and the
    lineage, which render nothing when dbt compiles (so the SQL is the same, byte for byte) but cost Jinja
    time in every batch, and name a group that no properties file declares yet.

    The arguments go in as one JSON string that `fromjson` reads: Jinja compiles a string literal as one node, where
    the literals of gold_call are hundreds (compiling them was most of the Jinja time of a batch, twice: when dbt
    parses the batch model and when it compiles it). fromjson gives the same values, so the macro writes the same
    SQL (tests/test_materialize.py renders both).
    """
    return HEADER + "\n" + packed_call("dptool.gold", gold_arguments(c, catalog), c.period) + "\n"


def packed_call(macro: str, arguments: dict, period: str | None = None) -> str:
    """`{{ macro(**fromjson("...")) }}`: the arguments as one JSON string literal, `period` (a Jinja expression, not
    a value) beside them."""
    head = f"period={period}, " if period is not None else ""
    return "{{ " + macro + "(" + head + "**fromjson(" + jinja_literal(jinja_literal(arguments)) + ")) }}"


def gold_arguments(c: Candidate, catalog: Catalog | None = None) -> dict:
    """The arguments of a candidate's dptool.gold call but its period (a Jinja expression), in the call's order."""
    def rules(ids) -> list | dict:
        return catalog.rules_argument(c.metric, ids) if catalog is not None else list(ids)

    args = {"metric": c.metric, "rules": rules(c.rules), "where": c.where}
    if c.group_by:
        args["group_by"] = c.group_by
    args["shape"] = c.shape
    if c.k is not None:
        args["k"] = c.k
    if c.min_rows is not None:
        args["min_rows"] = c.min_rows
    if c.base_rules:
        args["base_rules"] = rules(c.base_rules)
    return args


def gold_call(c: Candidate, catalog: Catalog | None = None) -> str:
    """`{{ dptool.gold(...) }}` of a candidate, its arguments as Jinja literals (what a gold model file shows)."""
    args = [f"{key}={jinja_literal(value)}" for key, value in gold_arguments(c, catalog).items()]
    if c.period is not None:  # already a Jinja expression (e.g. dbt.date_trunc(...)), before base_rules as always
        args.insert(len(args) - (1 if c.base_rules else 0), f"period={c.period}")
    return "{{ dptool.gold(" + ", ".join(args) + ") }}"


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
               tests: bool = True, kept: list[dict] = (), records: dict[str, dict] | None = None) -> dict:
    """The properties file of the gold models: their group; per task its description (question, metric, with
    the task's record in `records` the fields a reviewer checks as a table, rules with links to their pages in dbt
    docs, rule documents), task meta and (with `tests`) the rule test; and the overview model, whose page lists
    every task. `kept` are the entries of other bundles' gold models, as an earlier run wrote them
    (dptool.generate.bundles)."""
    models = []
    for c in candidates:
        metric = catalog.metrics[c.metric]
        lines = [_jinja_text(_question(c, catalog, questions)), "",
                 f"Metric: {metric.label} — {metric.formula} ({_link(c.metric, metric.unique_id, 'model')})"]
        if records and c.task_id in records:
            lines += ["", *review_fields(records[c.task_id], catalog)]
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
    models += kept
    if models:
        models.append(_overview_properties(overview_rows(candidates, catalog, questions, kept), catalog))
    return {"version": 2, "groups": [GROUP], "models": models}


SCOPES = {"all": "all: every rule that governs the metric", "subset": "subset: the rules the question names",
          "none": "none: no rule applies"}
SHOWN_GOLD = 300  # characters of a gold answer in its description; the bundle has it whole


def review_fields(task: dict, catalog: Catalog) -> list[str]:
    """What a reviewer checks of a task, as a markdown table of one field a row (dbt docs shows the task's meta as
    one line of JSON): analysis type, rule scope, rules in force, withdrawn rule, gold answer, tolerance, support.
    Each value is shown as it is (Jinja- and table-safe)."""
    def rules(ids) -> str:
        ids = [r for r in ids or [] if isinstance(r, str)]
        return ", ".join(_link(f"rule__{r}", catalog.rules[r].unique_id, "macro") if r in catalog.rules else _code(r)
                         for r in ids) or "none"

    scope = task.get("rule_scope")
    if task.get("withdrawn_rule") and scope == "all":
        scope_text = "all but the withdrawn rule"
    else:
        scope_text = SCOPES.get(scope, scope or "—")
    gold = json.dumps(task.get("gold"), ensure_ascii=False, separators=(", ", ": "))
    if len(gold) > SHOWN_GOLD:
        gold = gold[:SHOWN_GOLD] + f"… ({len(gold) - SHOWN_GOLD:,} characters more in tasks.jsonl)"
    tolerance = task.get("tolerance")
    rows = [("analysis type", _code(task.get("analysis_type", ""))), ("rule scope", scope_text),
            ("rules in force", rules(task.get("rules_in_force"))),
            ("withdrawn rule", rules([task["withdrawn_rule"]]) if task.get("withdrawn_rule") else "—"),
            ("gold answer", _code(gold)),
            ("tolerance", ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in tolerance.items())
             if isinstance(tolerance, dict) and tolerance else "—"),
            ("support", _support(task.get("support")))]
    return ["| field | value |", "| --- | --- |",
            *(f"| {name} | {_jinja_text(value.replace('|', chr(92) + '|').replace(chr(10), ' '))} |"
              for name, value in rows)]


def _code(text: str) -> str:
    """A markdown code span of `text` (its fence longer than any run of backticks in it)."""
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _support(support) -> str:
    """The rows, entities (and a rate's events) the answer rests on: the thinnest group's, and the minimum asked."""
    if not isinstance(support, dict):
        return str(support) if support else "—"
    groups = [g for g in support.get("groups") or [] if isinstance(g, dict)]
    entity = ", ".join(support.get("entity") or []) or "entities"
    text = ""
    events = "min_events" in support
    if groups:
        rows, entities = min(g.get("rows") or 0 for g in groups), min(g.get("entities") or 0 for g in groups)
        fewest = f", {min(g.get('events') or 0 for g in groups)} events" if events else ""
        text = (f"{len(groups)} group{'s' if len(groups) != 1 else ''}, the thinnest {rows} rows{fewest} and "
                f"{entities} distinct {entity}; ")
    text += (f"at least {support.get('min_rows')} rows, {support.get('min_entities')} entities and "
             f"{support['min_events']} events of the rate asked" if events else
             f"at least {support.get('min_rows')} rows and {support.get('min_entities')} entities asked")
    removed = support.get("removed") or []
    return text + (f"; the rules remove {len(removed)} group{'s' if len(removed) != 1 else ''}" if removed else "")


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


@dataclass(frozen=True)
class OverviewRow:
    """A task as the overview model lists it."""

    task_id: str
    analysis_type: str
    metric: str
    rules: tuple[str, ...]
    question: str  # as the description shows it (Jinja-safe)


def overview_rows(candidates: list[Candidate], catalog: Catalog, questions: dict[str, str] | None = None,
                  kept: list[dict] = ()) -> list[OverviewRow]:
    """The overview's rows: this run's candidates, then the gold models kept for other bundles, by id."""
    rows = [OverviewRow(c.task_id, c.analysis_type, c.metric, tuple(c.skeleton.rules),
                        _jinja_text(_question(c, catalog, questions))) for c in candidates]
    for entry in kept:
        task = entry["config"]["meta"]["dptool"]["task"]
        rows.append(OverviewRow(entry["name"], task["analysis_type"], task["metric"], tuple(task["rules"]),
                                entry["description"].split("\n\nMetric: ", 1)[0]))
    return sorted(rows, key=lambda r: r.task_id)


def _overview_properties(tasks: list[OverviewRow], catalog: Catalog) -> dict:
    rows = ["| task | question | metric | rules |", "| --- | --- | --- | --- |"]
    for t in tasks:
        metric = catalog.metrics.get(t.metric)
        rules = ", ".join(_link(catalog.rules[r].title, catalog.rules[r].unique_id, "macro") if r in catalog.rules
                          else r for r in t.rules)
        question = t.question.replace("|", "\\|").replace("\n", " ")
        shown = _link(metric.label, metric.unique_id, "model") if metric else t.metric
        rows.append(f"| {_link(t.task_id, f'model.{catalog.project}.{t.task_id}', 'model')} | {question} | "
                    f"{shown} | {rules or '—'} |")
    text = "\n".join([
        f"The {len(tasks)} tasks of the benchmarks `dptool generate` wrote: one gold model each, hidden from the "
        f"navigation and search of these docs (follow a task's link). A task's page holds its question, its metric "
        f"and rule documents, its compiled SQL (the base and the rule-modified query side by side) and, among its "
        f"dependencies, the rule macros it applies. Build them all: "
        f"`dbt build --selector {GOLD_GROUP} --vars '{{{GOLD_VAR}: true}}' --threads 1` (they are disabled unless "
        f"the var `{GOLD_VAR}` is true, so that no everyday dbt command builds them).", "", *rows])
    return {"name": OVERVIEW, "description": text,
            "columns": [{"name": name} for name in OVERVIEW_COLUMNS]}


def overview_sql(tasks: list[OverviewRow]) -> str:
    """The overview model: one row per task; it depends on every metric the tasks ask about."""
    # one select per task, joined as text: a union of a thousand selects is too deep a tree to print
    query = "\nUNION ALL\n".join(exp.select(*[literal(v).as_(k) for k, v in zip(OVERVIEW_COLUMNS, (
        t.task_id, t.analysis_type, t.metric, ", ".join(t.rules)), strict=True)]).sql(pretty=True)
        for t in tasks)
    metrics = sorted({t.metric for t in tasks})
    return (HEADER + "{{ config(" + ENABLED + "materialized='view', schema='" + GOLD_SCHEMA + "', tags=['" + GOLD_TAG
            + "'], group='" + GOLD_GROUP + "') }}\n"
            + "{#- lineage: every metric the tasks ask about, declared while dbt parses (a ref of an ephemeral model "
              "at run time would inline it) -#}\n"
            + "{%- if not execute %}{% for metric in " + jinja_literal(metrics) + " %}{% do ref(metric) %}{% endfor %}"
              "{% endif %}\n"
            + "{% raw %}" + query + "{% endraw %}\n")


PROPERTIES = "_dptool_gold.yml"
_SAFE_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def write_properties(project: DbtProject, candidates, catalog, questions=None, tests: bool = True,
                     kept: list[dict] = (), records: dict[str, dict] | None = None) -> None:
    """Write the properties file of the gold models and their overview model (none without models)."""
    folder = project.project_dir / GOLD_DIR
    # libyaml's dumper writes the same text as PyYAML's own, ~8x sooner (a 1,000-task file: 0.8 s -> 0.1 s)
    text = yaml.dump(properties(candidates, catalog, questions, tests, kept, records), Dumper=_SAFE_DUMPER,
                     sort_keys=False, allow_unicode=True, width=100)
    (folder / PROPERTIES).write_text("# written by `dptool generate`; do not edit\n" + text, encoding="utf-8")
    overview = folder / f"{OVERVIEW}.sql"
    if candidates or kept:
        overview.write_text(overview_sql(overview_rows(candidates, catalog, questions, kept)), encoding="utf-8")
    else:
        overview.unlink(missing_ok=True)


def materialize(project: DbtProject, candidates: list[Candidate], catalog: Catalog, connection: Connection,
                on_done: Callable[[int], None] | None = None, also: dict | None = None,
                ) -> Iterator[tuple[Candidate, Built | str]]:
    """Each candidate, in the order given, with its Built or the reason it was dropped.

    One `dbt compile` writes every gold query; the target runs them while the caller reads the rows of
    those done. A candidate is dropped when its model does not compile, its query fails, or the rule it
    applies does not change its rows. `on_done(n)` is called as n more queries are compiled or run.
    `also` maps names to more model texts (the support queries) for the same `dbt compile`: one dbt run, not two;
    each text is replaced by its Compiled before the first candidate comes out.
    """
    name = _project_name(project)
    # a batch injects the metric models of all its texts: texts of one metric together keep it short
    order = sorted(candidates, key=lambda c: (c.metric, c.task_id))
    texts = {c.task_id: compile_text(c, catalog) for c in order}
    extra = dict(also or {})
    if texts.keys() & extra.keys():
        raise ValueError("materialize: a text of `also` is named like a candidate")
    compiled = compile_texts(project, {**texts, **extra}, on_done)
    if also is not None:
        also.update({name: compiled[name] for name in extra})
    runnable = [c for c in candidates if compiled[c.task_id].sql is not None]
    # closed in this frame, not by the garbage collector: a Ctrl-C raised in a finalizer would be lost
    with Warehouse.of(connection) as wh, \
            closing(wh.query_shared(compiled[c.task_id].query for c in runnable)) as results:
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
                 questions: dict[str, str] | None = None, out: Path | None = None,
                 previous: Path | None = None, records: dict[str, dict] | None = None) -> dict[str, str]:
    """Write the gold model of each candidate kept and their properties, rule tests included: what the user's
    `dbt build --select tag:dptool_gold` builds and tests. Returns the sha256 of each model this run wrote, by task id.

    With `out` (this run's bundle) and `previous` (the folder as the last run left it), the models of every
    other bundle generated from the project stay (dptool.generate.bundles); all other earlier models go.
    """
    folder = project.project_dir / GOLD_DIR
    remove_models(project)
    folder.mkdir(parents=True)
    written = {}
    for c in candidates:
        text = model_sql(c, catalog)
        (folder / f"{c.task_id}.sql").write_text(text, encoding="utf-8")
        written[c.task_id] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    kept, bundles = [], []
    if out is not None and previous is not None and previous.is_dir():
        entries = _entries(previous / PROPERTIES)
        for bundle, ids in served_elsewhere(previous, out, project.project_dir, catalog.project).items():
            bundles.append(bundle)
            for task_id in ids:
                if task_id in written or task_id not in entries or not (previous / f"{task_id}.sql").is_file():
                    continue
                shutil.copyfile(previous / f"{task_id}.sql", folder / f"{task_id}.sql")
                kept.append(entries.pop(task_id))  # popped: a model two other bundles share is kept once
    write_properties(project, candidates, catalog, questions, kept=sorted(kept, key=lambda e: e["name"]),
                     records=records)
    if out is not None:
        write_list(folder, [str(out), *bundles], project.project_dir)
    return written


def _entries(path: Path) -> dict[str, dict]:
    """The gold models' entries of a properties file an earlier run wrote, by name (none if unreadable)."""
    try:
        models = (yaml.load(path.read_text(encoding="utf-8"), Loader=_SAFE_LOADER) or {}).get("models") or []
    except (OSError, yaml.YAMLError, AttributeError):
        return {}
    return {m["name"]: m for m in models if isinstance(m, dict) and m.get("name") != OVERVIEW
            and isinstance(((m.get("config") or {}).get("meta") or {}).get("dptool"), dict)}


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
