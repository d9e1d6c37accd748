"""`dptool generate` end to end: every gold answer in the bundle is reproduced by its stored SQL."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from dptool.answers import allowed_error
from dptool.evaluate.score import load_tasks
from dptool.generate.bundles import listed as listed_bundles
from dptool.generate.enrich import answer
from dptool.generate.instantiate import Candidate
from dptool.generate.sample import Skeleton


@pytest.fixture(scope="module")
def tasks(demo_bundle) -> list[dict]:
    out, _ = demo_bundle
    return [json.loads(line) for line in (out / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]


def metric_sections(out, domain: str | None = None) -> list[str]:
    """The metric entries (`## <label>` with a Formula line) of kb/<domain>/metrics.md, of every domain when None."""
    paths = sorted((out / "kb").glob(f"{domain or '*'}/metrics.md"))
    sections = [s for p in paths for s in p.read_text(encoding="utf-8").split("\n## ")[1:]]
    return [s for s in sections if "\n- Formula: " in s]


def test_bundle_layout(demo_bundle, demo_catalog):
    out, _ = demo_bundle
    assert sorted(p.name for p in out.iterdir()) == [".dptool", "bundle.json", "card.md", "graph.json", "kb",
                                                    "tasks.jsonl", "warehouse.duckdb"]
    # one knowledge base per domain (issue 26): each domain's catalog and policies apart
    assert sorted(p.name for p in (out / "kb").iterdir()) == demo_catalog.domains == ["banking", "ecommerce"]
    for domain in demo_catalog.domains:
        assert (out / "kb" / domain / "metrics.md").is_file()
        assert sorted(p.stem for p in (out / "kb" / domain / "rules").glob("*.md")) == \
            sorted(r.id for r in demo_catalog.rules.values() if r.domain == domain)
    assert not list(out.parent.glob(".bundle.tmp-*")), "the temp folder of the atomic write is left behind"


NINE_TYPES = {"knowledge_retrieval", "point_query", "trend_analysis", "comparison", "ranking", "significance_testing",
              "threshold_crossing", "counterfactual", "decomposition"}


def test_all_nine_analysis_types_in_every_domain(tasks):
    counts = Counter((t["domain"], t["analysis_type"]) for t in tasks)
    assert {t["domain"] for t in tasks} == {"banking", "ecommerce"}
    for domain in ("banking", "ecommerce"):
        assert {k for d, k in counts if d == domain} == NINE_TYPES, domain
    # augmentation raises every type to 10 per domain (--min-per-type), from skeletons the probes chose
    low = {(d, k): n for (d, k), n in counts.items() if n < 10}
    assert not low, low


def test_every_metric_and_rule_appears(tasks, demo_catalog):
    covered = {m for t in tasks for m in t["metric_ids"]}
    assert covered == set(demo_catalog.metrics), sorted(set(demo_catalog.metrics) - covered)
    assert {r for t in tasks for r in t["rule_ids"]} == set(demo_catalog.rules)


def test_tiers(tasks):
    for task in tasks:
        expected = ("knowledge" if task["analysis_type"] == "knowledge_retrieval"
                    else "knowledge+analytics+rule" if task["rule_ids"] else "knowledge+analytics")
        assert task["tier"] == expected, task["task_id"]


def test_knowledge_tasks_hold_their_passage_and_facts(tasks, demo_catalog):
    known = [t for t in tasks if t["tier"] == "knowledge"]
    assert known
    for task in known:
        assert task["gold_sql"] is None and task["gold"]["facts"]
        if task["rule_ids"]:
            document = demo_catalog.rules[task["rule_ids"][0]].document
            assert task["gold"]["passage"] in document


def test_task_records_hold_the_design_fields(tasks):
    required = {"task_id", "domain", "analysis_type", "tier", "question", "answer_format", "gold", "base",
                "gold_sql", "base_sql", "metric_ids", "rule_ids", "dimension", "slice", "subgraph_id",
                "dbt_node", "tolerance"}
    for task in tasks:
        assert required <= set(task), required - set(task)
        if task["gold_sql"]:
            assert task["dbt_node"].endswith("." + task["task_id"])
        else:  # a knowledge task points at its rule macro or metric model
            assert task["dbt_node"].split(".")[0] in ("macro", "model")


def _answers_from_stored_sql(con, task: dict) -> dict:
    """Gold and base answers re-derived from the rows of the stored SQL, the way generate derived them."""
    rows, columns = [], None
    for variant in ("base", "gold"):
        cur = con.execute(task[f"{variant}_sql"])
        columns = ["variant"] + [d[0] for d in cur.description]
        rows += [(variant, *r) for r in cur.fetchall()]
    skeleton = Skeleton(task["metric_ids"][0], f"x.{task['dimension']}", "categorical", tuple(task["rule_ids"]), ())
    key = task["answer_format"].get("key")
    c = Candidate(skeleton, task["analysis_type"], [], [key] if key else [], "", task["answer_format"].get("k"),
                  slice=task["slice"])

    class Format:
        unit = task["answer_format"]["unit"]
        format = task["answer_format"]["format"]

    return answer(c, Format, columns, rows)


def test_every_gold_is_reproduced_by_its_stored_sql_on_the_bundle_warehouse(demo_bundle, tasks):
    out, _ = demo_bundle
    con = duckdb.connect(str(out / "warehouse.duckdb"), read_only=True)
    for task in tasks:
        if task["gold_sql"] is None:
            continue
        got = _answers_from_stored_sql(con, task)
        assert (got["gold"], got["base"]) == (task["gold"], task["base"]), task["task_id"]


def test_every_trend_gold_is_the_exact_change_of_its_gold_sqls_rows(demo_bundle, tasks):
    """Recomputed here, not by enrich: the monthly values of gold_sql's rows on the bundle's warehouse, unrounded,
    give each trend's total change within the task's tolerance, and its peak (issue 23: golds computed from values
    rounded to six decimals were off by more than the tolerance for small shares)."""
    out, _ = demo_bundle
    con = duckdb.connect(str(out / "warehouse.duckdb"), read_only=True)
    checked = 0
    for task in tasks:
        if task["analysis_type"] != "trend_analysis":
            continue
        cursor = con.execute(task["gold_sql"])
        names = [d[0] for d in cursor.description]
        series = sorted((r[names.index("period")], float(r[names.index("value")])) for r in cursor.fetchall()
                        if r[names.index("value")] is not None)
        first, last = series[0][1], series[-1][1]
        change = (last - first) / abs(first) * 100
        gold = task["gold"]["total_change_pct"]
        assert abs(change - gold) <= allowed_error(gold, task["tolerance"]) / 10, (task["task_id"], change, gold)
        peak = max(series, key=lambda p: p[1])[0]
        label = f"{peak.year:04d}-{peak.month:02d}" if hasattr(peak, "year") else \
            f"{1900 + int(peak) // 100}-{int(peak) % 100:02d}"
        assert label == task["gold"]["peak_period"], task["task_id"]
        checked += 1
    assert checked >= 20


def test_every_rule_task_gold_differs_from_its_base(tasks):
    rule_tasks = [t for t in tasks if t["rule_ids"]]
    assert rule_tasks
    for task in rule_tasks:
        if task["tier"] == "knowledge":
            continue
        assert task["tier"] == "knowledge+analytics+rule"
        assert task["gold"] != task["base"], task["task_id"]


def test_threshold_separates_base_from_gold(tasks):
    checked = 0
    for task in tasks:
        if task["analysis_type"] != "threshold_crossing":
            continue
        if task["rule_ids"]:
            assert task["gold"]["result"] != task["base"]["result"], task["task_id"]
        # outside the tolerance of the gold value (and the base's): a value the scorer accepts is on its verdict's
        # side; a threshold within it would ask about rounding, not about the rules
        tol = task["tolerance"]
        for value in [task["gold"]["value"]] + ([task["base"]["value"]] if task["rule_ids"] else []):
            assert abs(task["gold"]["threshold"] - value) > allowed_error(value, tol), task["task_id"]
        checked += 1
    assert checked >= 20


def test_stored_sql_reads_only_agent_visible_tables(demo_bundle, tasks):
    out, _ = demo_bundle
    con = duckdb.connect(str(out / "warehouse.duckdb"), read_only=True)
    rows = con.execute("select table_schema, table_name from information_schema.tables").fetchall()
    visible = {f"{s}.{t}" for s, t in rows}
    import sqlglot
    from sqlglot import exp

    for task in tasks:
        if task["gold_sql"] is None:
            continue
        tree = sqlglot.parse_one(task["gold_sql"], read="duckdb")
        ctes = {c.alias for c in tree.find_all(exp.CTE)}
        read = {f"{t.db}.{t.name}" for t in tree.find_all(exp.Table) if t.name not in ctes}
        assert read and read <= visible, (task["task_id"], read - visible)


def test_warehouse_holds_only_the_agent_visible_tables(demo_bundle, demo_catalog):
    out, _ = demo_bundle
    con = duckdb.connect(str(out / "warehouse.duckdb"), read_only=True)
    tables = sorted(con.execute("select table_schema || '.' || table_name from information_schema.tables").fetchall())
    assert [t[0] for t in tables] == sorted(f"{t.domain}.{t.name}" for t in demo_catalog.tables.values())
    assert {f"ecommerce.{n}" for n in ["customers", "order_items", "order_payments", "order_reviews", "orders",
                                       "product_category_name_translation", "products", "sellers"]} <= {
        t[0] for t in tables}


def test_questions_name_no_database_identifier(tasks):
    for task in tasks:
        q = task["question"]
        assert "_" not in q and "dptool" not in q.lower(), q


def test_card_counts_match_the_tasks(demo_bundle, tasks):
    out, _ = demo_bundle
    text = (out / "card.md").read_text(encoding="utf-8")
    assert f"- Tasks: {len(tasks)}" in text
    assert "- Seed: 42" in text
    for name, n in Counter(t["analysis_type"] for t in tasks).items():
        assert f"| {name} | {n} |" in text


def test_summary_says_where_the_bundle_is_and_how_to_open_docs(demo_bundle):
    out, proc = demo_bundle
    assert str(out) in proc.stdout
    assert "dbt docs serve" in proc.stdout
    assert "point_query" in proc.stdout


def test_gold_model_files_match_the_bundles(demo_project, demo_bundle, tasks):
    # the folder holds a model per task of this bundle, and of every other bundle generated from the project
    folder = demo_project.project_dir / "models" / "dptool_gold"
    models = {p.stem for p in folder.glob("*.sql")} - {"dptool_tasks"}
    assert {t["task_id"] for t in tasks if t["gold_sql"]} <= models
    listed = [(demo_project.project_dir / b).resolve() for b in listed_bundles(folder)]  # relative to the project
    assert not [b for b in listed_bundles(folder) if Path(b).is_absolute()]
    assert Path(demo_bundle[0]).resolve() in listed
    served = {t["task_id"] for b in listed if (b / "tasks.jsonl").is_file() for t in load_tasks(b)
              if t["gold_sql"]}
    assert models <= served


def test_no_two_tasks_ask_the_same_question(tasks):
    questions = Counter(" ".join(t["question"].lower().split()) for t in tasks)
    assert [q for q, n in questions.items() if n > 1] == []


def _closure_from_graph(graph: dict):
    """The rules that govern each metric, from graph.json alone: rule -> metric edges, through metric -> metric."""
    modifies, components = {}, {}
    for e in graph["edges"]:
        source, target = e["source"].split(":", 1)[1], e["target"].split(":", 1)[1]
        if e["type"] == "rule_metric":
            modifies.setdefault(target, set()).add(source)
        elif e["type"] == "metric_metric":
            components.setdefault(source, []).append(target)

    def closure(metric: str) -> set[str]:
        seen, todo, rules = set(), [metric], set()
        while todo:
            current = todo.pop()
            if current not in seen:
                seen.add(current)
                rules |= modifies.get(current, set())
                todo += components.get(current, [])
        return rules

    return closure, components


def test_every_sql_task_states_the_scope_its_gold_applies(demo_bundle, tasks):
    """Issue 12: rules_in_force is exactly what the gold applies, and for rule_scope `all` (the question says
    nothing; a counterfactual: every other policy) it is the closure of the metric's rules in graph.json."""
    out, _ = demo_bundle
    closure, components = _closure_from_graph(json.loads((out / "graph.json").read_text(encoding="utf-8")))
    sql_tasks = [t for t in tasks if t["gold_sql"]]
    scopes = Counter(t["rule_scope"] for t in sql_tasks)
    assert {"all", "subset"} <= set(scopes) <= {"all", "subset", "none"}, scopes
    for t in sql_tasks:
        governing, in_force = closure(t["metric_ids"][0]), set(t["rules_in_force"])
        withdrawn = t.get("withdrawn_rule")
        assert (withdrawn is not None) == (t["analysis_type"] == "counterfactual"), t["task_id"]
        assert set(t["spec"]["rules"]) == in_force, t["task_id"]  # what the gold model applied
        question = t["question"].lower()
        if t["rule_scope"] == "all":
            assert in_force == governing - {withdrawn}, (t["task_id"], sorted(governing), sorted(in_force))
            assert "apply only" not in question and "before any policy" not in question, t["task_id"]
        elif t["rule_scope"] == "subset":
            assert in_force and in_force < governing and "apply only" in question, t["task_id"]
        else:
            assert not in_force and governing and "before any policy" in question, t["task_id"]
        if withdrawn:
            assert t["rule_scope"] == "all" and withdrawn in governing, t["task_id"]
            assert set(t["spec"]["base_rules"]) == governing, t["task_id"]
            assert "every other policy still in force" in question, t["task_id"]
    # composites were sampled, and under scope `all` their golds apply rules declared on their components only
    own = {e["source"].split(":", 1)[1] + ">" + e["target"].split(":", 1)[1]
           for e in json.loads((out / "graph.json").read_text(encoding="utf-8"))["edges"] if e["type"] == "rule_metric"}
    composite = [t for t in sql_tasks if components.get(t["metric_ids"][0]) and t["rule_scope"] == "all"]
    assert any(any(f"{r}>{t['metric_ids'][0]}" not in own for r in t["rules_in_force"]) for t in composite)
    # counterfactuals keep the other rules in force
    assert any(t["analysis_type"] == "counterfactual" and t["rules_in_force"] for t in sql_tasks)


def test_card_counts_the_scope_check(demo_bundle):
    out, _ = demo_bundle
    assert "| scope_mismatch | 0 |" in (out / "card.md").read_text(encoding="utf-8")


def test_composite_gold_models_route_each_rule_to_its_component(demo_project, tasks, demo_catalog):
    """A composite's gold model names every metric it is made of, each with the rules that modify it."""
    import jinja2
    from jinja2 import nodes

    composite = [t for t in tasks if t["gold_sql"] and demo_catalog.metrics[t["metric_ids"][0]].components]
    assert composite
    for t in composite:
        sql = (demo_project.project_dir / "models" / "dptool_gold" / f"{t['task_id']}.sql").read_text("utf-8")
        (call,) = [n for n in jinja2.Environment(extensions=["jinja2.ext.do"]).parse(sql).find_all(nodes.Call)
                   if isinstance(n.node, nodes.Getattr) and n.node.attr == "gold"]
        rules = next(kw.value.as_const() for kw in call.kwargs if kw.key == "rules")
        metric = t["metric_ids"][0]
        assert list(rules) == demo_catalog.metric_tree(metric), t["task_id"]
        for name, applied in rules.items():
            assert set(applied) == {r for r in t["rules_in_force"] if name in demo_catalog.rules[r].modifies}


# --- definitions an analyst can follow (issue 12) -----------------------------------------------------------------


def test_every_metric_of_the_kb_says_its_period_and_grain(demo_bundle, demo_catalog):
    out, _ = demo_bundle
    sections = metric_sections(out)
    assert len(sections) == len(demo_catalog.metrics)
    for section in sections:
        lines = section.splitlines()
        assert [line for line in lines if line.startswith("- Period: `")], lines[0]
        assert [line for line in lines if line.startswith("- Row grain: ")], lines[0]
    text = "\n## ".join(sections)
    # a review counts in the period its order was placed in; a transaction on its posting date
    assert "- Period: `order_purchase_timestamp` — Purchase time of the reviewed order: a review counts in the " \
           "period its order was placed in, not the one it was written in." in text
    assert "- Period: `date` — Posting date of the transaction" in text
    assert "- Durations: clock hours from purchase to payment approval counted as the hour boundaries crossed" in text
    composites = [m for m in demo_catalog.metrics.values() if m.components]
    assert len([line for line in text.splitlines() if line.startswith("- Components: ") and ", combined as " in line]) \
        == len(composites)


def test_the_kb_names_every_policy_that_governs_each_metric(demo_bundle, demo_catalog):
    """A question that names no policy applies all that govern the metric: the kb lists them, a composite's
    with those of its components (an analyst's check found a gold applying a rule no kb text tied to it)."""
    out, _ = demo_bundle
    for metric in demo_catalog.metrics.values():
        by_label = {s.splitlines()[0]: s for s in metric_sections(out, metric.domain)}
        (line,) = [x for x in by_label[metric.label].splitlines() if x.startswith("- Policies: ")]
        listed = set(re.findall(r"`rules/(\w+)\.md`", line))
        assert listed == {r.id for r in demo_catalog.governing_rules(metric.id)}, metric.id
        for rule_id in listed:  # cited by its path in the metric's own domain's kb
            assert (out / "kb" / metric.domain / "rules" / f"{rule_id}.md").is_file()
    by_label = {s.splitlines()[0]: s for s in metric_sections(out, "ecommerce")}
    odr = next(x for x in by_label["Order Defect Rate"].splitlines() if x.startswith("- Policies: "))
    assert "Delivery SLA Grace Period (`rules/delivery_sla_grace_period.md`, through Late Delivery Rate)" in odr


def test_every_ranking_gold_has_as_many_rows_as_its_question_asks(tasks):
    rankings = [t for t in tasks if t["analysis_type"] == "ranking"]
    assert rankings
    for task in rankings:
        k = task["answer_format"]["k"]
        assert len(task["gold"]) == k and len(task["base"]) == k, task["task_id"]
        assert f"which {k} had the highest" in task["question"], task["task_id"]


def test_questions_state_what_the_scorer_relies_on(tasks, demo_catalog):
    from dptool.generate.validate import states_trend_rule

    trends = [t for t in tasks if t["analysis_type"] == "trend_analysis"]
    assert trends and all(states_trend_rule(t["question"]) for t in trends)
    assert all(t["answer_format"]["flat_band_pct"] == 5.0 for t in trends)
    for task in tasks:
        if task["analysis_type"] == "ranking" and demo_catalog.rules_of(task["metric_ids"][0]):
            when = "(counted after the policies have excluded any" if task["spec"]["rules"] else \
                "(counted before any policy)"
            assert when in task["question"], task["task_id"]


def test_no_gold_or_base_holds_a_null_value(tasks):
    def values(answer):
        if isinstance(answer, list):
            return [row["value"] for row in answer]
        return [v for k, v in answer.items() if k in ("value", "value_a", "value_b", "p_value", "total_change_pct")]

    for task in tasks:
        if task["gold_sql"] is None or task["analysis_type"] == "decomposition":
            continue  # a breakdown may hold a group whose value is NULL: the scorer reads NULL as its own value
        assert None not in values(task["gold"]) + values(task["base"]), task["task_id"]


def test_windows_lie_where_every_table_of_the_metric_has_data(tasks, demo_project, demo_catalog):
    from dptool.generate.profile import data_span, profile_dimensions
    from dptool.project.warehouse import Warehouse

    with Warehouse.of(demo_project.connection()) as wh:
        profiles = profile_dimensions(demo_catalog, wh)
    for task in tasks:
        window = (task["slice"] or {}).get("window")
        if not window:
            continue
        first, last = data_span(demo_catalog, demo_catalog.metrics[task["metric_ids"][0]], profiles)
        start, end = window["start"], window["end"]
        assert f"{first[0]:04d}-{first[1]:02d}-01" <= start and end <= _month_after(last), task["task_id"]


def _month_after(month: tuple[int, int]) -> str:
    y, m = month
    return f"{y + m // 12:04d}-{m % 12 + 1:02d}-01"


def test_the_card_lists_drops_by_reason_types_below_the_minimum_and_rules_without_effect(demo_bundle):
    out, _ = demo_bundle
    card = (out / "card.md").read_text(encoding="utf-8")
    drops = card.split("### Drops by reason")[1].split("###")[0]
    rows = [line for line in drops.splitlines() if line.startswith("| ") and not line.startswith(("| reason", "| ---"))]
    assert rows, drops
    for row in rows:
        reason, count, examples = (cell.strip() for cell in row.strip("|").split(" | "))
        assert int(count) >= 1 and examples.count(" · ") >= 2, row
        assert len(examples.split("; ")) == min(2, int(count)), row
    assert "### Below --min-per-type (10)" in card
    # the demo proves every rule -> metric link (tests/test_proofs.py): the card says so
    assert "- none: every proven rule changes its metric" in card
