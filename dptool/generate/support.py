"""The support of each gold answer: how many rows and distinct entities each group it reads rests on.

A comparison of two districts of one account each, a counterfactual resting on one loan, measure noise, not an
agent. So every candidate whose gold query ran gets a support query, written by dbt from the same query spec as
its gold variant (`dptool.support`: same rules, filters, groups and period; its value replaced by counts): per
group (per period for a trend, per leaf metric for a composite), the rows the rules leave that the value reads
(dptool.generate.rests_on: the finished loans of a default rate, not every loan), the distinct entities (the
metric's entity column: an account, an order, the sellers a per-seller ratio divides by) among them, a rate's
numerator events, and whether the rules' `having` (a suppression) removes the group. Like the probes and gold
queries, they are compiled in one `dbt compile` (dptool.project.batch) and run in batches on the target; nothing
is built.

The minimum is a project setting, the dbt var `dptool_min_support` ({rows, entities, events, entity}); by default
30 rows, 10 entities and 10 events. Validation drops a task any group of which rests on less (`thin_support`), one
of groups where at most one has rows the value reads (`degenerate_groups`: by its definition only that group can
have a value), and one whose question asks for every group while its rules remove some of them
(`removed_group_asked`).
"""

from __future__ import annotations

from collections import Counter
from contextlib import closing

from dptool.generate.enrich import period_label
from dptool.generate.instantiate import Candidate
from dptool.generate.materialize import packed_call
from dptool.generate.minimum import MIN_ENTITIES, MIN_EVENTS, MIN_ROWS, VAR, Setting, noun
from dptool.generate.profile import plain
from dptool.generate.rests_on import counted as value_reads
from dptool.generate.rests_on import distinct_column
from dptool.project.batch import compile_texts
from dptool.project.catalog import Catalog
from dptool.project.dbt import Connection, DbtProject
from dptool.project.warehouse import Warehouse

# analysis types whose question lists groups or months: a group a rule removes must be said or not asked
LISTING = ("decomposition", "ranking", "trend_analysis")
HEADER = "-- written by `dptool generate` for one run; removed when the run has read it\n"


def entity_columns(catalog: Catalog, domain: str) -> list[str]:
    """The heuristic entity columns of a domain, most shared first: the `_id` columns of its metric models, by how
    many of them carry each (Berka's account_id is on every banking metric, Olist's order_id on every marketplace
    one). Only where a metric declares no entity of its own (`entity`)."""
    counts = Counter(c for m in catalog.metrics.values() if m.domain == domain and not m.components
                     for c in dict.fromkeys(m.columns) if c.lower().endswith("_id"))
    return [c for c, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def own_entity(metric) -> str:
    """The entity a metric declares, else the column it counts distinct values of ("" for neither)."""
    return metric.entity or distinct_column(metric.value)


def metric_entity(catalog: Catalog, metric_id: str) -> list[str]:
    """The entity columns a metric's support tries, in order: its declared or counted entity (a composite: those
    of its components), then its domain's heuristic ones. The var's `entity` comes before them all (in the macro).
    Each leaf of a composite counts the first its rows have: the sellers of a per-seller ratio's denominator."""
    metric = catalog.metrics[metric_id]
    declared = [own_entity(m) for m in (metric, *(catalog.metrics[c] for c in catalog.metric_tree(metric_id)[1:]))
                if own_entity(m)]
    return list(dict.fromkeys([*declared, *entity_columns(catalog, metric.domain)]))


def counted_entity(catalog: Catalog, metric_id: str, minimum: Setting) -> tuple[str, str]:
    """The column a metric's support counts and why that one, as the terminal says it; ("", why) for rows."""
    metric = catalog.metrics[metric_id]
    columns = set(metric.columns)
    chosen = next((c for c in minimum.chosen if c in columns), None)
    if chosen:
        return chosen, f"the `entity` of dbt var {VAR}"
    if metric.entity:
        return metric.entity, "the metric's declared entity"
    if distinct_column(metric.value) in columns:
        return distinct_column(metric.value), "the column the metric counts distinct values of"
    found = next((c for c in entity_columns(catalog, metric.domain) if c in columns), None)
    if found:
        return found, (f"an `_id` column, as no entity is declared: set the `entity` of dbt var {VAR} if "
                       f"{noun(found)} are not what one row belongs to")
    return "", "no entity column: rows are counted"


def entity_lines(catalog: Catalog, minimum: Setting) -> list[str]:
    """One line per entity column the supports count: which, for which metrics, and why (the terminal's)."""
    by: dict[tuple[str, str], list[str]] = {}
    for m in sorted(catalog.metrics):
        if not catalog.metrics[m].components:
            by.setdefault(counted_entity(catalog, m, minimum), []).append(m)
    lines = [f"minimum support: {minimum.rows} rows, {minimum.entities} distinct entities and {minimum.events} "
             f"events of a rate per group (dbt var {VAR}: {minimum.var_text()})"]
    for (column, why), metrics in sorted(by.items()):
        what = f"{noun(column)} (`{column}`, {why})" if column else why
        names = ", ".join(metrics[:4]) + (f" and {len(metrics) - 4} more" if len(metrics) > 4 else "")
        lines.append(f"  entities counted: {what}: {names}")
    return lines


def support_sql(c: Candidate, catalog: Catalog, entity: list[str], minimum: Setting) -> str:
    """The support query of a candidate: `dptool.support` with the arguments of its gold variant (as one JSON string
    that `fromjson` reads, as materialize's compile_text passes them: Jinja compiles one literal, not hundreds)."""
    arguments = {"metric": c.metric, "rules": catalog.rules_argument(c.metric, c.rules), "where": c.where,
                 "group_by": c.group_by, "entity": entity, "min_rows": minimum.rows,
                 "min_entities": minimum.entities, "counted": value_reads(catalog, [c.metric]),
                 "min_events": minimum.events}
    return HEADER + packed_call("dptool.support", arguments, c.period) + "\n"


def support_texts(candidates: list[Candidate], catalog: Catalog, minimum: Setting | None = None) -> dict[str, str]:
    """The support query of each candidate, by the name `supports` reads it under, those of one metric together
    (a batch injects the metric models of all its texts)."""
    minimum = minimum or Setting()
    entity = {m: metric_entity(catalog, m) for m in {c.metric for c in candidates}}
    order = sorted(candidates, key=lambda c: (c.metric, c.task_id))
    return {f"support__{c.task_id}": support_sql(c, catalog, entity[c.metric], minimum) for c in order}


def supports(project: DbtProject, built: list, catalog: Catalog, connection: Connection,
             compiled: dict | None = None, minimum: Setting | None = None) -> dict[str, dict | str]:
    """The support record of each Built (dptool.generate.materialize), by task id; a string when its query failed.

    `compiled` holds the support queries dbt already compiled (`support_texts`, in materialize's `dbt compile`:
    one dbt run less per round); without it they are compiled here."""
    if not built:
        return {}
    order = sorted(built, key=lambda b: (b.candidate.metric, b.candidate.task_id))
    names = {f"support__{b.candidate.task_id}": b for b in order}
    if compiled is None or not names.keys() <= compiled.keys():
        compiled = compile_texts(project, support_texts([b.candidate for b in order], catalog, minimum))
    out: dict[str, dict | str] = {}
    runnable = [n for n in names if compiled[n].sql is not None]
    for n in names:
        if compiled[n].sql is None:
            out[names[n].candidate.task_id] = f"support query: {compiled[n].error}"
    with Warehouse.of(connection) as wh, closing(wh.query_shared(compiled[n].query for n in runnable)) as results:
        for name, result in zip(runnable, results, strict=True):
            b = names[name]
            if isinstance(result, Exception):
                out[b.candidate.task_id] = f"support query: {' '.join(str(result).split())}"
                continue
            out[b.candidate.task_id] = record(b.candidate, b.columns, b.rows, *result)
    return out


def record(c: Candidate, gold_columns: list[str], gold_rows: list[tuple], columns: list[str],
           rows: list[tuple]) -> dict:
    """The support of a candidate's answer: each group it reads with its rows and entities (the fewest over the
    metrics a composite is computed from) and, for a rate, its events (those of the rates it is computed from,
    together), and the groups its rules remove that its question would list."""
    keys = columns[:columns.index("support_input")]
    at = {name: i for i, name in enumerate(columns)}
    cells: dict[tuple, list[tuple]] = {}
    minimum = (MIN_ROWS, MIN_ENTITIES, MIN_EVENTS)
    entities: set[str] = set()
    for row in rows:
        events = row[at["support_events"]] if "support_events" in at else None
        every = row[at["support_all_rows"]] if "support_all_rows" in at else row[at["support_rows"]]
        cells.setdefault(_key(row[:len(keys)]), []).append(
            (int(row[at["support_rows"]]), int(row[at["support_entities"]]), int(row[at["value"]]) == 1,
             None if events is None else int(events), int(every)))
        minimum = (int(row[at["support_min_rows"]]), int(row[at["support_min_entities"]]),
                   int(row[at["support_min_events"]]) if "support_min_events" in at else MIN_EVENTS)
        if row[at["support_entity"]] is not None:
            entities.add(row[at["support_entity"]])
    inputs = len({row[at["support_input"]] for row in rows}) or 1
    rates = any(cell[3] is not None for found in cells.values() for cell in found)
    variant = gold_columns.index("variant")
    index = [gold_columns.index(k) for k in keys]
    answer = {v: list(dict.fromkeys(_key(tuple(r[i] for i in index)) for r in gold_rows if r[variant] == v))
              for v in ("gold", "base")}
    groups = [_group(key, cells.get(key, []), inputs, rates, keys, c) for key in answer["gold"]]
    removed: list = []
    if c.analysis_type in LISTING:
        gone = set()
        for key, found in cells.items():
            # a ranking lists the groups of at least min_rows rows (its gold's `having count(*)`): a smaller one
            # the rules remove was never asked
            qualifies = c.min_rows is None or (len(found) == inputs and all(f[4] >= c.min_rows for f in found))
            if qualifies and not all(f[2] for f in found):
                gone.add(key)
        # the base applies no rule: every group with rows (a listing of groups of at least min_rows rows counted
        # after the policies never asked for one a policy empties or shrinks below them)
        if c.min_rows is None and not c.base_rules:
            gone |= set(answer["base"]) - set(answer["gold"])
        removed = sorted((_label(k, keys, c) for k in gone - set(answer["gold"])), key=lambda v: (v is None, str(v)))
    # in the order of their values: the rows of a query come in any order, a record is byte-stable
    groups.sort(key=lambda g: (g["group"] is None, str(g["group"])))
    out = {"min_rows": minimum[0], "min_entities": minimum[1], "entity": sorted(entities), "groups": groups,
           "removed": removed}
    if rates:
        out["min_events"] = minimum[2]
    if c.analysis_type == "ranking":
        # the top k are chosen among every group of at least min_rows rows the rules keep: a thin one not shown
        # decides which are shown as much as one shown does
        shown = set(answer["gold"])
        competing = [_group(key, found, inputs, rates, keys, c) for key, found in cells.items()
                     if key not in shown and len(found) == inputs and all(f[2] for f in found)
                     and (c.min_rows is None or all(f[4] >= c.min_rows for f in found))]
        out["thin_unshown"] = sorted((g["group"] for g in competing if _under(g, out)),
                                     key=lambda v: (v is None, str(v)))
    return out


def _group(key: tuple, found: list[tuple], inputs: int, rates: bool, keys: list[str], c: Candidate) -> dict:
    """One group's support: the fewest rows and entities over the metrics it is computed from (none when one of
    them lacks the group), and a rate's events, those of its rates together."""
    whole = len(found) == inputs
    rows_, ents = (min(f[0] for f in found), min(f[1] for f in found)) if whole else (0, 0)
    group = {"group": _label(key, keys, c), "rows": rows_, "entities": ents}
    if rates:
        group["events"] = sum(f[3] for f in found if f[3] is not None) if whole else 0
    return group


def _key(values: tuple) -> tuple:
    return tuple(plain(v) if not hasattr(v, "year") else v for v in values)


def _label(key: tuple, keys: list[str], c: Candidate):
    """A group as the task records it: its value, a trend's month as YYYY-MM, None for a single slice."""
    if not keys:
        return None
    if keys[0] == "period":
        return period_label(key[0], c.encoding)
    return key[0] if len(key) == 1 else list(key)


def _under(group: dict, support: dict) -> bool:
    return group["rows"] < support["min_rows"] or group["entities"] < support["min_entities"] \
        or group.get("events", support.get("min_events", 0)) < support.get("min_events", 0)


def thin(support: dict) -> list:
    """The groups of a support record under its minimum (rows, entities, and a rate's events): those it answers
    with, and those a ranking chose its top k among without showing them."""
    return [g["group"] for g in support.get("groups") or [] if _under(g, support)] + \
        list(support.get("thin_unshown") or [])


# answers made of groups: each must be able to have a value for the comparison to say anything
GROUPED = ("decomposition", "ranking", "comparison", "significance_testing")


def degenerate(task: dict) -> str | None:
    """Why a task of groups is degenerate (None when it is not): at most one of its groups has rows the value
    reads (or, for a rate, events), so by the metric's definition only that one can have a value (order defect
    rate by order status: only delivered orders have a delivery date). A listing of one group in all (a metric
    whose rows all hold one order status) is degenerate too: there is nothing to break down."""
    support = task.get("support")
    if task.get("analysis_type") not in GROUPED or not isinstance(support, dict):
        return None
    groups = support.get("groups") or []
    live = [g["group"] for g in groups if g["rows"] > 0 and g.get("events", 1) > 0]
    if len(groups) == 1 and live:
        return f"{live[0]!r} is its only group"
    if len(live) <= 1:
        return (f"only {live[0]!r} of its {len(groups)} groups has rows the value reads" if live
                else f"none of its {len(groups)} groups has rows the value reads")
    return None


def setting(catalog: Catalog, tasks: list[dict], minimum: Setting | None = None) -> Setting:
    """The setting the support queries of `tasks` read (`minimum`, as dbt_project.yml sets it, when none ran), with
    the entity column each domain's supports counted (the most frequent; the one its metrics would count when none
    ran)."""
    minimum = minimum or Setting()
    records = [t for t in tasks if isinstance(t.get("support"), dict)]
    first = records[0]["support"] if records else {"min_rows": minimum.rows, "min_entities": minimum.entities}
    by_domain = {}
    for d in catalog.domains:
        counted = Counter(e for t in records if t["domain"] == d for e in t["support"]["entity"])
        if not counted:
            counted = Counter(counted_entity(catalog, m, minimum)[0] for m in sorted(catalog.metrics)
                              if catalog.metrics[m].domain == d and not catalog.metrics[m].components)
            counted.pop("", None)
        columns = [e for e, _ in sorted(counted.items(), key=lambda kv: (-kv[1], kv[0]))]
        if columns:
            by_domain[d] = columns[0]
    events = next((t["support"]["min_events"] for t in records if "min_events" in t["support"]), minimum.events)
    return Setting(first["min_rows"], first["min_entities"], tuple(sorted(by_domain.items())), minimum.chosen,
                   events)
