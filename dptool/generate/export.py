"""Stage 10: the benchmark bundle, written atomically (a temp folder, then one rename).

tasks.jsonl · bundle.json (fingerprint, how it was made) · kb/ (rule documents, metric catalog) ·
warehouse.duckdb (agent-visible tables only) · graph.json · card.md. Before the rename, every task's gold_sql is
run on the new warehouse and must reproduce its gold rows: a bundle whose answers don't reproduce is never written.
`Reproduction` writes the warehouse before the tasks are known and runs each round's gold_sql on it while the next
round compiles (dbt compiles on one thread; DuckDB runs meanwhile on the other cores).
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

from dptool.bundle import RECORD, record_text
from dptool.errors import DptoolError
from dptool.generate.rule_free import right_without_rules
from dptool.generate.sample import ANALYSIS_TYPES
from dptool.outdir import BUNDLE, check_replaceable, publish, staging_folder
from dptool.project.catalog import Catalog
from dptool.project.dbt import Connection
from dptool.project.selects import selections
from dptool.project.warehouse import Warehouse, export_tables
from dptool.sql import SharedQuery

TIERS = ("knowledge", "knowledge+analytics", "knowledge+analytics+rule")


def bundle_tables(catalog: Catalog) -> list[tuple[str, str, str]]:
    """(relation_name, schema, name) of every agent-visible table: one schema per domain."""
    return [(t.relation_name, t.domain, t.name) for _, t in sorted(catalog.tables.items())]


def write_bundle(out: Path, *, catalog: Catalog, source_db: str | Connection, tasks: list[dict],
                 gold_rows: dict[str, list], graph_json: str, card: str,
                 extra_files: dict[str, str] | None = None, gold_queries: dict[str, SharedQuery] | None = None,
                 record: dict | None = None, support=None, staged: Reproduction | None = None) -> Path:
    """Write the bundle to `out`, replacing what was there only once everything is written.

    `out` must be absent, empty or a bundle dptool wrote (dptool.outdir): a user's folder is never replaced.

    `source_db` is the DuckDB file of the target, or its connection (any target: see export_tables).
    `gold_queries` gives a task's gold_sql as the SharedQuery it was written as (VariantWriter.queries): the
    reproduction computes the ephemeral models the gold queries share once each. `record` (how the bundle was
    made) goes to bundle.json with the bundle's fingerprint (dptool.bundle). `support`
    (dptool.generate.support.Setting) is the minimum support the kb's conventions state. With `staged` (a
    Reproduction), its folder becomes the bundle: its warehouse is written and the gold_sql it ran is not run again.
    """
    out = check_replaceable(out, BUNDLE)
    tmp = staged.folder if staged is not None else staging_folder(out)
    try:
        if staged is not None:
            staged.check(tasks, gold_rows, gold_queries)
        else:
            export_tables(source_db, bundle_tables(catalog), tmp / "warehouse.duckdb")
            reproduce(tmp / "warehouse.duckdb", tasks, gold_rows, gold_queries)
        with open(tmp / "tasks.jsonl", "w", encoding="utf-8", newline="\n") as f:
            for task in tasks:
                f.write(json.dumps(task, ensure_ascii=False) + "\n")
        (tmp / RECORD).write_text(record_text(record or {}, (tmp / "tasks.jsonl").read_bytes()), encoding="utf-8")
        write_kb(tmp / "kb", catalog, support)
        (tmp / "graph.json").write_text(graph_json, encoding="utf-8")
        (tmp / "card.md").write_text(card, encoding="utf-8")
        for name, text in sorted((extra_files or {}).items()):
            (tmp / name).write_text(text, encoding="utf-8")
        publish(tmp, out, BUNDLE)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def reproduce(warehouse_path: Path, tasks: list[dict], gold_rows: dict[str, list],
              gold_queries: dict[str, SharedQuery] | None = None) -> None:
    """Run each task's gold_sql on the bundle's warehouse; its rows must equal the materialized ones.

    A gold_sql given in `gold_queries` runs with the CTEs it shares with others computed once (Warehouse.query_shared):
    the same text, each shared CTE's body run as it is written there.
    """
    with Warehouse(warehouse_path) as wh:
        for error in _reproduced(wh, tasks, gold_rows, gold_queries).values():
            if error is not None:
                raise error


def _reproduced(wh: Warehouse, tasks: list[dict], gold_rows: dict[str, list],
                gold_queries: dict[str, SharedQuery] | None) -> dict[str, DptoolError | None]:
    """Each SQL task's gold_sql run on `wh`, by task id in the order given: None where it gave its gold rows, else
    the error that says so (or the query's own)."""
    sql_tasks = [t for t in tasks if t["gold_sql"] is not None]  # a knowledge task's gold is a passage, not rows

    def query(task: dict) -> SharedQuery:
        shared = (gold_queries or {}).get(task["task_id"])
        return shared if shared is not None and shared.sql == task["gold_sql"] else SharedQuery.plain(task["gold_sql"])

    out: dict[str, DptoolError | None] = {}
    with closing(wh.query_shared(query(t) for t in sql_tasks)) as results:
        for task, result in zip(sql_tasks, results, strict=True):
            if isinstance(result, Exception):
                out[task["task_id"]] = result
                continue
            _, rows = result
            expected = gold_rows[task["task_id"]]
            out[task["task_id"]] = None if _same_rows(rows, expected) else DptoolError(
                f"{task['dbt_node']}: gold_sql on the bundle's warehouse gives {rows[:3]!r}, "
                f"the gold model gave {expected[:3]!r}")
    return out


class Reproduction:
    """The bundle's staging folder with its warehouse written first, and the gold_sql of each round run on it on a
    thread of its own, while the caller goes on (the next round's dbt compile): `check` waits for them. A DuckDB
    target's tables are copied on that thread too (beside the first round's compile); another target's, at once.

    What `check` finds does not depend on when each query ran: it reads the outcome of each task the bundle keeps,
    in the bundle's order, and runs there any gold_sql not given before (or given with other SQL or rows). Closed
    early (an error, Ctrl-C), the queries running stop and the folder is removed.
    """

    def __init__(self, out: Path, catalog: Catalog, source_db: str | Connection):
        self._pool: ThreadPoolExecutor | None = None
        self._wh: Warehouse | None = None
        self.folder = staging_folder(check_replaceable(out, BUNDLE))
        try:  # a Ctrl-C from the folder's making on: close() removes it
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dptool-reproduce")
        except BaseException:
            self.close()
            raise
        self._given: dict[str, tuple[str, list, Future]] = {}  # task id -> gold_sql, gold rows, its outcome

        def write() -> None:
            export_tables(source_db, bundle_tables(catalog), self.folder / "warehouse.duckdb")
            self._wh = Warehouse(self.folder / "warehouse.duckdb", keep_shared=True)  # over every round

        # a dbt adapter is not for two threads at once: the caller's dbt runs while this thread works
        duckdb_file = not isinstance(source_db, Connection) or (
            source_db.adapter_type == "duckdb" and source_db.path not in (None, "", ":memory:"))
        try:
            if duckdb_file:
                self._written = self._pool.submit(write)
            else:
                write()
                self._written = Future()
                self._written.set_result(None)
        except BaseException:
            self.close()
            raise

    def submit(self, tasks: list[dict], gold_rows: dict[str, list],
               gold_queries: dict[str, SharedQuery] | None = None) -> None:
        """Run these tasks' gold_sql on the bundle's warehouse on the reproduction's thread; return at once."""
        if self._written.done():
            self._written.result()  # the warehouse could not be written: said now, not after every round
        sql_tasks = [t for t in tasks if t["gold_sql"] is not None]
        futures = {t["task_id"]: Future() for t in sql_tasks}
        for t in sql_tasks:
            self._given[t["task_id"]] = (t["gold_sql"], gold_rows[t["task_id"]], futures[t["task_id"]])

        def run() -> None:
            try:
                self._written.result()
                found = _reproduced(self._wh, sql_tasks, gold_rows, gold_queries)
            except BaseException as exc:  # noqa: BLE001 - each task's future says it
                found = dict.fromkeys(futures, exc)
            for task_id, future in futures.items():
                future.set_result(found[task_id])

        self._pool.submit(run)

    def check(self, tasks: list[dict], gold_rows: dict[str, list],
              gold_queries: dict[str, SharedQuery] | None = None) -> None:
        """Raise the error of the first task (in the order given) whose gold_sql does not give its gold rows; the
        warehouse is closed after."""
        sql_tasks = [t for t in tasks if t["gold_sql"] is not None]
        late = [t for t in sql_tasks if self._given.get(t["task_id"], (None, None, None))[:2]
                != (t["gold_sql"], gold_rows[t["task_id"]])]
        if late:
            self.submit(late, gold_rows, gold_queries)
        self._written.result()
        found = {t["task_id"]: self._given[t["task_id"]][2].result() for t in sql_tasks}
        self._shut()
        for task in sql_tasks:
            error = found[task["task_id"]]
            if isinstance(error, BaseException):
                raise error

    def _shut(self) -> None:
        """Stop the queries still running, wait for the thread, close the warehouse."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)  # first: no round starts after the interrupt
        if self._wh is not None:
            self._wh.interrupt()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        if self._wh is not None:
            self._wh.close()
            self._wh = None

    def close(self) -> None:
        """Stop, and remove the staging folder (unless the bundle was published from it)."""
        self._shut()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Reproduction:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _same_rows(a: list[tuple], b: list[tuple]) -> bool:
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b, strict=True):
        if len(ra) != len(rb):
            return False
        for x, y in zip(ra, rb, strict=True):
            if isinstance(x, float) or isinstance(y, float):
                if x is None or y is None or not math.isclose(float(x), float(y), rel_tol=1e-9, abs_tol=1e-9):
                    return False
            elif x != y:
                return False
    return True


def write_kb(folder: Path, catalog: Catalog, support=None) -> None:
    """The knowledge base an agent searches, one folder per domain: kb/<domain>/metrics.md (the metric catalog, its
    conventions first) and kb/<domain>/rules/<id>.md (one file per rule).

    A folder per domain even when there is one: a task's domain always names the folder its agent reads, and a
    second domain added to a project moves no document (a path cited in an answer or a report stays right).
    """
    for domain in catalog.domains:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", domain):
            raise DptoolError(f"domain {domain!r}: not a folder name for kb/<domain>/ (letters, digits, '_', '-', "
                              "'.'); set meta.dptool.domain to such a name")
        write_domain_kb(folder / domain, catalog, domain, support)


def titled(rule) -> str:
    """A rule's document under one top-level heading, its title: a document that starts with it is not given it
    again, and a top-level heading of its own below the title becomes a second-level one."""
    lines = rule.document.strip().splitlines()
    first = lines[0] if lines else ""
    if first.startswith("# ") and \
            " ".join(first.removeprefix("# ").split()).casefold() == " ".join(rule.title.split()).casefold():
        head, body = first, lines[1:]
    else:
        head, body = f"# {rule.title}", ["", *lines]
    fenced = False
    for i, line in enumerate(body):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.startswith("# "):
            body[i] = "#" + line
    return "\n".join([head, *body]) if lines else head


def write_domain_kb(folder: Path, catalog: Catalog, domain: str, support=None) -> None:
    """One domain's knowledge base: its metric catalog (metrics.md) and its rule documents (rules/<id>.md)."""
    rules = folder / "rules"
    rules.mkdir(parents=True)
    for rule_id, rule in sorted(catalog.rules.items()):
        # in every domain whose metrics it modifies: the catalog's Policies lines cite it there
        if domain in {rule.domain, *(catalog.metrics[m].domain for m in rule.modifies if m in catalog.metrics)}:
            (rules / f"{rule_id}.md").write_text(titled(rule) + "\n" + without_policy(rule, catalog), encoding="utf-8")
    lines = ["# Metric catalog", "", *METRICS_PREAMBLE, "", *conventions_section(catalog.conventions.get(domain),
                                                                                 support and support.sentence(domain))]
    for _, m in sorted(catalog.metrics.items()):
        if m.domain != domain:
            continue
        tables = ", ".join(sorted(catalog.tables[t].name for t in m.tables))
        lines += [
            f"## {m.label}",
            "",
            f"- Domain: {m.domain}",
            f"- Tier: {m.tier}" if m.tier else "- Tier: —",
            f"- Formula: {m.formula}",
            f"- Unit: {unit_text(m)}",
            f"- Tables: {tables}",
            period_line(m, catalog),
            f"- Row grain: {m.grain} (one row each: counts, sums and averages run over these rows)",
        ]
        if m.duration:
            lines.append(f"- Durations: {m.duration}")
        lines += [f"- Selection: {s.sentence}." for s in selections(catalog, m.id)]
        if m.components:  # how a composite combines its components: their labels and its formula
            labels = [catalog.metrics[c].label for c in m.components]
            named = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
            lines.append(f"- Components: {named}, combined as {m.formula}")
        lines.append(policies_line(m, catalog))
        if m.description:
            lines += ["", m.description.strip()]
        lines.append("")
    (folder / "metrics.md").write_text("\n".join(lines), encoding="utf-8")


NO_UNIT = {"number": "a plain number (no unit declared)", "percent": "a percentage",
           "currency": "an amount of money (no currency declared)"}


# a share's one reading: questions ask it in percent, the metric models hold it as a fraction of 1
PERCENT_SCALE = "answers give it in percent; the warehouse holds it as a fraction of 1 (0.25 is 25 %)"


def unit_text(m) -> str:
    """A metric's unit as a person says it: `USD (currency)`; without a declared unit, what its format says; a
    percent's scale (PERCENT_SCALE)."""
    text = f"{m.unit} ({m.format})" if m.unit else NO_UNIT.get(m.format, f"no unit declared ({m.format})")
    return f"{text}: {PERCENT_SCALE}" if m.format == "percent" else text


WITHOUT_POLICY = "Without this policy"


def without_policy(rule, catalog: Catalog) -> str:
    """The section a rule document ends with in the kb: each metric it modifies as the catalog defines it, so that
    "had it never been adopted" and "apply only" another policy have one reading, a policy that redefines a metric
    or replaces its weights included ("" for a rule that modifies no metric of the catalog)."""
    metrics = [catalog.metrics[m] for m in rule.modifies if m in catalog.metrics]
    if not metrics:
        return ""
    lines = ["", f"## {WITHOUT_POLICY}", "",
             "Where this policy is not applied (had it never been adopted, or a question applies other policies "
             "only), each metric it modifies is as the catalog defines it, under the other policies applied:", ""]
    lines += [f"- {WITHOUT_POLICY}: {m.label} is as the catalog defines it: {m.formula}" for m in metrics]
    return "\n".join(lines) + "\n"


def policies_line(metric, catalog: Catalog) -> str:
    """`- Policies:` every policy that governs the metric (`Catalog.governing_rules`), a component's named with
    it: what a question under every policy applies, so its gold can be found from the kb alone, even where a
    rule document's own scope section names fewer metrics than the project declares."""
    governing = catalog.governing_rules(metric.id)
    if not governing:
        return "- Policies: none"
    named = []
    for rule in governing:
        own = metric.id in rule.modifies
        through = [catalog.metrics[m].label for m in catalog.metric_tree(metric.id)[1:] if m in rule.modifies]
        named.append(f"{rule.title} (`rules/{rule.id}.md`" + ("" if own or not through else
                                                             f", through {', '.join(through)}") + ")")
    return "- Policies: " + "; ".join(named)


METRICS_PREAMBLE = (
    "Each metric says which date places a row in a period (`Period`): a question about a month, a quarter,",
    "a half or a year takes the rows whose date falls in it, and a month-by-month trend groups the rows by",
    "the calendar month of that date. `Row grain` is what one row of the metric is. `Policies` are every",
    "policy that governs the metric (a composite's include those of its components): a question that names",
    "no policy applies all of them. `Selection` says whom a metric's definition picks (a top ten, the active",
    "ones, a first order) and over which rows they are picked.",
)


# How every gold answer of the bundle is computed, stated where an analyst looks first; each item is checked against
# recomputed golds (tests/test_conventions.py). A domain adds its own under "In this domain" (Catalog.conventions).
CONVENTION_ITEMS = {
    "Precedence": (
        "A policy that changes a metric prevails over the catalog's formula: the `Formula` of an entry is the metric "
        "before any policy, and a question that names no policy applies every policy listed under `Policies`. A "
        "policy applies from its effective date (by the date it names, else the metric's `Period` date) unless it "
        "says otherwise; a policy that says it applies to every period applies to periods before its effective date "
        "too, even when that date lies after the data."),
    "Period membership and bounds": (
        "A month, quarter, half or year is a calendar period, both ends included: a row is in it when its `Period` "
        "date falls on or after the first day and on or before the last day (any time of that day). Over the whole "
        "history means every row, whatever its date."),
    "Held in a period": (
        "The period selects a metric's rows by their `Period` date and by nothing else. What a row holds is read "
        "as the data records it, whenever it is dated: a product held on an account (a card, a loan, a standing "
        "order) counts as held even when it was issued or granted after the period's end, and a status or a history "
        "(a loan's status, a seller's reviews) is the one on record, not the one at the period's end."),
    "Trend direction and total change": (
        "A month-by-month trend has one value per calendar month with a value; a month without one (no rows, or "
        "removed by a policy) is left out, and the other months keep their calendar places. The direction is that "
        "of the least-squares line through the monthly values (flat when the line changes by less than 5% of the "
        "average monthly value from the first month to the last). The total change is from the actual value of "
        "the first month to the actual value of the last month with a value (never the fitted line): "
        "(last - first) / |first| x 100. The peak is the month with the highest value."),
    "Percent change of a share": (
        "A change in percent is relative, for a share too: a share that goes from 40% to 44% changed by +10%, not by "
        "4 percentage points."),
    "Day counting": (
        "Days are calendar days between dates (the time of day does not count). The N days before a date are the "
        "N days ending the day before it: the date itself is not one of them (the 365 days before a loan's grant "
        "date exclude the grant day). Counted from a date, that date is day 0."),
    "Blank versus NULL categories": (
        "A blank category (a single space, ' ') and a missing one (NULL) are different values: a breakdown or a "
        "ranking shows each as its own group (NULL as null), and neither is a category that a formula or a policy "
        "names. A question names them in words with their value: for example, \"the blank payment characterization "
        "(' ')\" is the rows whose value is exactly one space, \"payment characterization not recorded (NULL)\" "
        "those with none."),
    "A slice on another table's column": (
        "A slice (\"for seller state RJ\") or a group keeps the metric's own rows whose column has that value, "
        "whichever table the column comes from, and the metric is computed over those rows alone: for example, "
        "Revenue per Order for seller state RJ is the value of the RJ sellers' order items over the orders that hold "
        "one, not the whole of every order that has an RJ seller. A question says so where the two readings differ."),
    "Ties": (
        "A ranking orders groups by value, highest first; equal values are ordered by the group's name, ascending, "
        "and a group without a value comes last; the top k are the first k in that order."),
    "Apply only": (
        "A question that says \"apply only\" some policies applies those and no other policy of the metric or of "
        "its components: every other policy, one that redefines the metric, overrides it or replaces its weights "
        "included, is not applied, and what it would change is as the catalog defines it (each entry's `Formula`, "
        "a composite's default weights included; a rule document's last section states it). A question that says "
        "to use the metric as the catalog defines it applies no policy."),
}


SUPPORT_ITEM = "Minimum support"
REMOVED_ITEM = ("Groups a policy removes", (
    "A breakdown, a ranking or a trend lists the groups (or months) that remain once the policies in force are "
    "applied. Where a policy removes some of them (a suppression of small groups), the question says so: it asks for "
    "those \"whose figure our policies allow to be reported\"; a question that says nothing of it loses no group to a "
    "policy."))


def conventions_section(domain_conventions: str | None = None, support: str | None = None) -> list[str]:
    """## Conventions of metrics.md: CONVENTION_ITEMS, the minimum support (`support`, the sentence of
    dptool.generate.support.Setting) and how a listing treats groups a policy removes, then the domain's own
    (`Catalog.conventions`)."""
    lines = ["## Conventions", "", "How every answer in this knowledge base is computed, unless a metric's entry or a "
             "policy says otherwise.", ""]
    lines += [f"- **{name}.** {text}" for name, text in CONVENTION_ITEMS.items()]
    if support:
        lines.append(f"- **{SUPPORT_ITEM}.** In every question, {support}.")
    lines.append(f"- **{REMOVED_ITEM[0]}.** {REMOVED_ITEM[1]}")
    if domain_conventions:
        lines += ["", "### In this domain", "", domain_conventions.strip()]
    return lines + [""]


def period_line(metric, catalog: Catalog) -> str:
    """`- Period: …`: the date that places a row of the metric in a period, as its model documents it."""
    if not metric.period:
        return "- Period: none (the metric's rows carry no date: a question about it covers the whole history)"
    column = catalog.dimensions[metric.period].column
    what = metric.period_doc or catalog.dimensions[metric.period].label
    return f"- Period: `{column}` — {what.rstrip('.')}."


def card(*, catalog: Catalog, tasks: list[dict], rejected: Counter, dropped: int, graph_stats: dict,
         seed: int, versions: dict[str, str], domain_graphs: dict[str, dict] | None = None,
         llm: dict | None = None, drops: list[tuple[str, str]] | None = None, min_per_type: int | None = None,
         proofs=None, warnings: list[str] | None = None, parity=None, support=None) -> str:
    """card.md: what the bundle holds and how it was made; byte-stable for the same inputs.

    `llm` ({model, prompts, usage, review}) when an LLM phrased and judged: the card then says which
    stages used which model and prompt version, the requests and tokens per stage, and what the judge did.
    `drops` are (reason, candidate description) of every candidate that did not become a task; with
    `min_per_type`, the (domain, analysis type) pairs left below it are listed; `proofs`
    (dptool.generate.proofs.ProofFindings) gives the rules that change nothing on the data; `warnings` are the
    run's warning lines (a metric or rule with no task, and why), `parity` the MetricFlow check
    (dptool.generate.parity.Parity), `support` the minimum support in force (dptool.generate.support.Setting).
    """
    def table(title: str, counts: Counter) -> list[str]:
        rows = [f"### {title}", "", "| | tasks |", "| --- | ---: |"]
        rows += [f"| {k} | {v} |" for k, v in sorted(counts.items())]
        return rows + [""]

    by_rule_type = Counter(t for task in tasks for t in sorted(set(task["rule_types"])))
    lines = [
        "# Benchmark card",
        "",
        f"- Project: `{catalog.project}`",
        f"- Tasks: {len(tasks)}",
        f"- Seed: {seed}",
        f"- Manifest hash (sha256): `{catalog.manifest_hash}`",
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())),
        "- Question phrasing: deterministic templates (no LLM configured)" if llm is None else
        f"- Question phrasing: {llm['model']} (prompt {llm['prompts']['phrase']}), judged on DI-Bench's eight "
        "dimensions",
        "",
        "## Tasks",
        "",
        *table("By analysis type", Counter(t["analysis_type"] for t in tasks)),
        *_tier_table(tasks),
        *table("By rule type", by_rule_type),
        *table("By domain", Counter(t["domain"] for t in tasks)),
        *_type_by_domain(tasks),
        "## Validation",
        "",
        "- Candidates dropped after dbt (build failed, the rule did not change the answer, or no scorable",
        f"  answer): {dropped}",
        "",
        "| stage-1 check | rejected |",
        "| --- | ---: |",
        *[f"| {k} | {v} |" for k, v in sorted(rejected.items())],
        "",
        *_support_section(support, rejected),
        *_drops_section(drops),
        *_below_minimum(tasks, catalog, min_per_type),
        *_proofs_section(proofs, catalog),
        *_warnings_section(warnings),
        *(parity.card_lines() if parity is not None else []),
        *_llm_section(llm),
        "## Artifact linkage graph",
        "",
        f"- Nodes: {graph_stats['nodes']} ("
        + ", ".join(f"{k} {v}" for k, v in graph_stats["nodes_by_type"].items()) + ")",
        f"- Edges: {graph_stats['edges']} ("
        + ", ".join(f"{k} {v}" for k, v in graph_stats["edges_by_type"].items()) + ")",
        "",
        *_graph_by_domain(domain_graphs or {}),
    ]
    return "\n".join(lines)


def _tier_table(tasks: list[dict]) -> list[str]:
    """Tasks by tier, with those an answer computed under no rule gets right: every task no rule governs, and the
    rule tasks whose gold is their rule-free answer (they test no rule)."""
    tiers = Counter(t["tier"] for t in tasks)
    right = Counter(t["tier"] for t in tasks if right_without_rules(t))
    return ["### By tier", "", "| | tasks | right without the rules |", "| --- | ---: | ---: |",
            *[f"| {tier} | {n} | {right[tier]} |" for tier, n in sorted(tiers.items())], "",
            "Right without the rules: the tasks an answer that ignores every rule document gets right.", ""]


EXAMPLES_PER_REASON = 2


def _support_section(support, rejected: Counter) -> list[str]:
    """The minimum support in force and the tasks it dropped (thin_support, degenerate_groups), with those whose
    question asked for a group its rules remove (removed_group_asked)."""
    if support is None:
        return []
    return ["## Minimum support", "", f"- Setting: {support.sentence()}.",
            f"- Tasks dropped as resting on fewer (thin_support): {rejected.get('thin_support', 0)}",
            "- Tasks dropped as groups of which at most one has rows the value reads (degenerate_groups): "
            f"{rejected.get('degenerate_groups', 0)}",
            "- Tasks dropped because the question asked for a group its rules remove (removed_group_asked): "
            f"{rejected.get('removed_group_asked', 0)}", ""]


def _warnings_section(warnings: list[str] | None) -> list[str]:
    """What `dptool generate` warned of, as it said it: a metric or rule without a task says why here too."""
    if not warnings:
        return []
    return ["## Warnings", "", *[f"- {w.removeprefix('warning: ')}" for w in warnings], ""]


def describe(c) -> str:
    """A candidate as the card names it: metric, analysis type, slice (dimension value or groups, window)."""
    return _description(c.metric, c.analysis_type, c.dimension_column, c.slice)


def describe_task(task: dict) -> str:
    """A task as the card names it (see `describe`)."""
    subject = (task.get("metric_ids") or [None])[0] or ", ".join(task.get("rule_ids") or [])
    return _description(subject, task["analysis_type"], task.get("dimension"), task.get("slice") or {})


def _description(subject: str, analysis_type: str, dimension: str | None, slice_: dict) -> str:
    parts = [subject, analysis_type]
    if dimension and dimension in slice_:
        parts.append(f"{dimension} = {slice_[dimension]}")
    if slice_.get("groups"):
        parts.append(f"{dimension}: " + " vs ".join(str(g) for g in slice_["groups"]))
    elif dimension and dimension not in slice_ and analysis_type in ("ranking", "decomposition"):
        parts.append(f"by {dimension}")
    if slice_.get("window"):
        parts.append(slice_["window"]["label"])
    if slice_.get("withdrawn_rule"):
        parts.append(f"without {slice_['withdrawn_rule']}")
    return " · ".join(str(p) for p in parts)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _drops_section(drops: list[tuple[str, str]] | None) -> list[str]:
    """Every reason a candidate did not become a task, with its count and two examples."""
    if drops is None:
        return []
    rows = ["### Drops by reason", "",
            "Every candidate that did not become a task, by reason, with two of them (metric · analysis type · "
            "slice):", ""]
    if not drops:
        return rows + ["- none", ""]
    by_reason: dict[str, list[str]] = {}
    for reason, what in drops:
        by_reason.setdefault(reason, []).append(what)
    rows += ["| reason | candidates | examples |", "| --- | ---: | --- |"]
    for reason, whats in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        examples = "; ".join(_cell(w) for w in sorted(whats)[:EXAMPLES_PER_REASON])
        rows.append(f"| {_cell(reason)} | {len(whats)} | {examples} |")
    return rows + [""]


def _below_minimum(tasks: list[dict], catalog: Catalog, min_per_type: int | None) -> list[str]:
    """Every (domain, analysis type) that augmentation left below --min-per-type."""
    if min_per_type is None:
        return []
    kinds = sorted({"knowledge_retrieval", *(k for kinds in ANALYSIS_TYPES.values() for k in kinds)})
    have = Counter((t["domain"], t["analysis_type"]) for t in tasks)
    low = [(d, k, have[(d, k)]) for d in catalog.domains for k in kinds if have[(d, k)] < min_per_type]
    rows = [f"### Below --min-per-type ({min_per_type})", ""]
    if not low:
        return rows + [f"- none: every analysis type has at least {min_per_type} tasks in every domain", ""]
    rows += ["| domain | analysis type | tasks |", "| --- | --- | ---: |"]
    rows += [f"| {d} | {k} | {n} |" for d, k, n in low]
    return rows + [""]


def _proofs_section(proofs, catalog: Catalog) -> list[str]:
    """The rules whose catalog-level proof finds nothing for them to change on this data."""
    if proofs is None:
        return []
    rows = ["### Rules that change nothing on this data", "",
            f"From the rows of the catalog-level proofs the last `dbt build` left ({proofs.proofs} read; a rule that "
            "changes nothing makes its `dptool.rule_changes_answer` test warn):", ""]
    if proofs.unchanged:
        for rule_id, metric_id in proofs.unchanged:
            rule, metric = catalog.rules[rule_id], catalog.metrics[metric_id]
            rows.append(f"- {rule.title} (`{rule_id}`) leaves {metric.label} (`{metric_id}`) unchanged")
    elif proofs.proofs:
        rows.append("- none: every proven rule changes its metric")
    elif not catalog.rules:
        rows.append("- none: the project declares no rule")
    else:  # nothing was checked: claim nothing
        rows.append("- not checked: no catalog-level proof has rows (run the `dbt build` `dptool init` sets up, "
                    "with the dptool package's proof models, before generate)")
    rows += [f"- not read: {_cell(line)}" for line in proofs.unread]
    return rows + [""]


def _type_by_domain(tasks: list[dict]) -> list[str]:
    domains = sorted({t["domain"] for t in tasks})
    counts = Counter((t["analysis_type"], t["domain"]) for t in tasks)
    rows = ["### By analysis type and domain", "", "| | " + " | ".join(domains) + " |",
            "| --- |" + " ---: |" * len(domains)]
    for kind in sorted({t["analysis_type"] for t in tasks}):
        rows.append(f"| {kind} | " + " | ".join(str(counts[(kind, d)]) for d in domains) + " |")
    return rows + [""]


def _graph_by_domain(stats: dict[str, dict]) -> list[str]:
    """Nodes and edges by type per domain, beside DI-Bench Appendix H (71–76 nodes, 168–191 edges)."""
    if not stats:
        return []
    domains = sorted(stats)
    rows = ["### Per domain (DI-Bench Appendix H: 71–76 nodes, 168–191 edges per domain)", "",
            "| | " + " | ".join(domains) + " |", "| --- |" + " ---: |" * len(domains),
            "| nodes | " + " | ".join(str(stats[d]["nodes"]) for d in domains) + " |"]
    for kind in stats[domains[0]]["nodes_by_type"]:
        rows.append(f"| {kind} nodes | " + " | ".join(str(stats[d]["nodes_by_type"][kind]) for d in domains) + " |")
    rows.append("| edges | " + " | ".join(str(stats[d]["edges"]) for d in domains) + " |")
    for kind in stats[domains[0]]["edges_by_type"]:
        rows.append(f"| {kind} edges | " + " | ".join(str(stats[d]["edges_by_type"][kind]) for d in domains) + " |")
    return rows + [""]


def _llm_section(llm: dict | None) -> list[str]:
    """Which stages used which model, requests and tokens per stage, and the judge's outcome.

    Requests count every reply used, whether the model made it now or the cache replayed it, and tokens
    are those the model counted when it made the reply: a rerun from the cache gives the same card.
    """
    if llm is None:
        return []
    from dptool.generate.judge import DIMENSIONS, PHRASING

    usage = llm["usage"]
    review = llm["review"]
    rows = ["## LLM stages", "", "| stage | model | prompt | requests | prompt tokens | completion tokens |",
            "| --- | --- | --- | ---: | ---: | ---: |"]
    for stage in ("phrase", "judge", "rewrite"):
        u = usage.get(stage)
        requests, (prompt_tokens, completion_tokens) = (u.requests, u.tokens) if u else (0, (0, 0))
        rows.append(f"| {stage} | {llm['model']} | {llm['prompts'][stage]} | {requests} | {prompt_tokens} | "
                    f"{completion_tokens} |")
    counts = review.counts
    rows += ["", "Stage 2, the LLM judge (DI-Bench Appendix E.2): a task is admitted only if all eight dimensions",
             f"pass; a task failing only on phrasing ({', '.join(d.replace('_', ' ') for d in PHRASING)}, or the",
             "stage-1 wording checks) is rewritten once and checked again.", "",
             f"- Judged: {counts['judged']}; admitted: {counts['admitted']} "
             f"({counts['admitted_after_rewrite']} after a rewrite); rejected by the judge: "
             f"{counts['rejected_by_judge']}; rewritten: {counts['rewritten']}",
             "- Every reviewed task's questions, verdicts and justifications: `judge.jsonl`", "",
             "| dimension | failed on first verdict | failed by rejected tasks |", "| --- | ---: | ---: |"]
    rows += [f"| {d} | {review.failed_first[d]} | {review.failed_final[d]} |" for d in DIMENSIONS]
    return rows + [""]
