"""Every kind of semantic-layer metric a real repo has, on the bakery fixture (tests/fixtures/bakery), end to end.

The fixture is jaffle-sl-template's shape: customers, orders, order items, with one metric of each kind (simple,
filtered across semantic models one and two entities away, fill_nulls_with, percentiles exact and approximate,
create_metric, ratio, derived on one and on two semantic models, offsets, cumulative, conversion) and the
constructs that broke the import of jaffle-sl-template (a time dimension written as an expression, a documented
column the model lacks, `table: true` on a semantic model's node). `dptool init`, `dbt deps`, `dbt build` and
`dptool generate` run once for the module; MetricFlow checks every imported metric (generate's parity stage).
"""

from __future__ import annotations

import copy
import json
import shutil
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.version import Version

from dptool.errors import DptoolError
from dptool.generate.parity import check_parity
from dptool.project import semantic
from dptool.project.catalog import load_catalog
from dptool.project.dbt import DbtProject
from dptool.project.prepare import relation_columns
from tests.subscriptions import cli

FIXTURE = Path(__file__).parent / "fixtures" / "bakery"
IGNORED = shutil.ignore_patterns("target", "dbt_packages", "logs", "*.duckdb", "*.duckdb.wal", "dptool_gold",
                                 "dptool_semantic", "packages.yml", "package-lock.yml", "bundle", "__pycache__")
ARGS = ("--target", "8", "--min-per-type", "0")

TRANSLATED = {"average_item_price", "completed_revenue", "first_week_order_rate", "food_items", "item_revenue",
              "items", "items_per_order", "median_order_value", "new_customers", "north_item_revenue",
              "north_revenue", "ordering_customers", "orders_metric", "orders_per_new_customer", "p90_order_value",
              "return_rate", "revenue"}
# each skipped metric, and the start of the reason that says why no task can ask for it
SKIPPED = {
    "revenue_trailing_7d": "cumulative metric (a trailing window of 7 days): its value on a day aggregates the rows "
                           "of the 7 days up to that day, and over a longer period it is the value of one day of it "
                           "(period_agg: first)",
    "revenue_mtd": "cumulative metric (month-to-date): its value on a day aggregates the rows from the start of that "
                   "day's month to that day",
    "revenue_growth_mom": "input 'revenue_last_month' is offset by 1 month: the metric has a value per period of "
                          "metric_time only",
    "revenue_since_month_start": "input 'revenue_at_month_start' is offset to the start of the month: the metric has "
                                 "a value per period of metric_time only",
    "repeat_order_rate": "conversion metric (orders -> orders by customer within 30 days): its base events are not "
                         "one per customer",
}


def _copy(dest: Path) -> Path:
    shutil.copytree(FIXTURE, dest, ignore=IGNORED)
    return dest


def _set_up(root: Path) -> DbtProject:
    proc = cli("init", "--project-dir", str(root))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    project = DbtProject(root)
    project.run("deps")
    failed = [f"{r.unique_id}: {r.message}" for r in project.run("build") if r.status not in ("success", "pass")]
    assert not failed, failed
    return project


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """(project, the manifest dbt build wrote, the generate process, the bundle, its tasks)."""
    root = _copy(tmp_path_factory.mktemp("bakery") / "project")
    project = _set_up(root)
    manifest = json.loads(project.manifest_path.read_text(encoding="utf-8"))
    out = root / "bundle"
    proc = cli("generate", "--project-dir", str(root), "--out", str(out), *ARGS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    return project, manifest, proc, out, tasks


def _catalog(project: DbtProject, manifest: dict):
    return load_catalog(manifest, relation_columns=relation_columns(manifest, project))


def test_every_metric_is_imported_or_skipped_with_its_reason(run):
    project, manifest, proc, _, _ = run
    layer = semantic.read_layer(manifest, "bakery", relation_columns(manifest, project))
    assert set(layer.metrics) == TRANSLATED
    assert set(layer.skipped) == set(SKIPPED)
    for name, reason in SKIPPED.items():
        assert layer.skipped[name].startswith(reason), layer.skipped[name]
        assert f"skipped metric {name}: {reason}" in proc.stdout
    assert "semantic layer: 17 metrics translated, 5 skipped" in proc.stdout


def test_every_imported_metric_has_tasks_or_a_warning_that_names_why(run):
    _, _, proc, _, tasks = run
    by_metric = {t["metric_ids"][0] for t in tasks if t["gold_sql"]}
    # the fixture's returns are few: every Return Rate candidate rests on fewer than the minimum support
    assert by_metric == TRANSLATED - {"return_rate"}
    (warning,) = [line for line in proc.stdout.splitlines() if line.startswith("warning: metric ")]
    assert warning.startswith("warning: metric return_rate: no task: all ") and "thin_support" in warning
    assert warning.endswith("; to keep those of thin_support: lower `rows`, `entities` or `events`, or set "
                            "`entity`, of the dbt var dptool_min_support {rows: 30, entities: 10, events: 10} in the "
                            "vars of dbt_project.yml")


def test_metricflow_agrees_on_every_compared_metric(run):
    """MetricFlow's own engine and dptool's macros give every imported metric the same value, overall, by month and
    by two dimensions; the approximate percentile is not compared, and the card says why."""
    _, _, proc, out, _ = run
    assert "MetricFlow parity: 16 of 16 metrics equal (1 not compared)" in proc.stdout, proc.stdout
    card = (out / "card.md").read_text(encoding="utf-8")
    for line in ("| first_week_order_rate | overall, by month, by customer_type, by region | equal |",
                 "| items_per_order | overall, by month, by channel, by order_status | equal |",
                 "| orders_per_new_customer | overall, by customer_type, by region | equal |",
                 "| north_item_revenue | overall, by month, by product_type, by channel | equal |",
                 "| p90_order_value | | not compared: MetricFlow computes its percentile approximately "
                 "(use_approximate_percentile), dptool exactly |"):
        assert line in card


def test_a_flipped_filter_is_caught(run, tmp_path):
    """A translation with one filter flipped (completed orders -> every other order) differs from MetricFlow: one
    warning per slice naming the metric, both values and the group."""
    project, manifest, _, _, _ = run
    root = tmp_path / "project"
    shutil.copytree(project.project_dir, root, symlinks=True, ignore=shutil.ignore_patterns("bundle", "logs"))
    props = root / "models" / "dptool_semantic" / "_dptool_semantic.yml"
    text = props.read_text(encoding="utf-8")
    assert text.count("(order_status = 'completed')") == 1
    props.write_text(text.replace("(order_status = 'completed')", "(order_status <> 'completed')"), encoding="utf-8")
    clone = DbtProject(root)
    parity = check_parity(clone, _catalog(clone, manifest), clone.connection())
    assert parity.summary() == "MetricFlow parity: 15 of 16 metrics equal (1 not compared)"
    # one warning for the metric, not one per group: how many groups differ, where, and one example
    (warning,) = parity.warnings()
    assert warning.startswith("warning: metric completed_revenue (completed_revenue): MetricFlow parity: ")
    assert " groups differ in overall, " in warning and "; e.g. overall: dptool " in warning
    assert ", MetricFlow " in warning
    by_region = next(s for s in parity.slices if s.metric == "completed_revenue" and s.name == "by region")
    assert any(d.endswith(" for north") for d in by_region.differences)  # the card's example names the group


def test_an_expression_time_dimension_places_rows_by_its_column(run):
    """`expr: cast(ordered_at as date)`: the period is orders.ordered_at (a window of whole days on it keeps the rows
    the expression keeps), not "none"; the kb says so."""
    project, manifest, _, out, tasks = run
    catalog = _catalog(project, manifest)
    assert catalog.metrics["revenue"].period == "model.bakery.orders.ordered_at"
    assert catalog.metrics["items"].period == "model.bakery.order_items.ordered_at"
    kb = next(out.glob("kb/**/metrics.md")).read_text(encoding="utf-8")
    section = kb.split("## Revenue\n")[1].split("\n## ")[0]
    assert "- Period: `ordered_at` — When the order was placed." in section, section
    assert any(t["analysis_type"] == "trend_analysis" and t["metric_ids"][0] == "revenue" for t in tasks)


def test_an_expression_that_is_no_column_is_a_warning(run):
    _, manifest, _, _, _ = run
    edited = copy.deepcopy(manifest)
    orders = edited["semantic_models"]["semantic_model.bakery.orders"]
    next(d for d in orders["dimensions"] if d["name"] == "ordered_on")["expr"] = "coalesce(ordered_at, now())"
    layer = semantic.read_layer(edited, "bakery")
    assert ("models/marts/_semantic_models.yml: semantic model 'orders': time dimension 'ordered_on' is the "
            "expression 'coalesce(ordered_at, now())', which reads no one column of 'orders' as a date: its metrics "
            "have no period") in layer.warnings[0]
    assert "period" not in layer.metrics["revenue"].decl


def test_a_documented_column_the_relation_lacks(run):
    """orders' YAML documents customer_type, which the model lacks: one warning (file, model, column); the metrics
    of orders are built from the columns it has, and slice by the customer's customer_type, joined."""
    project, manifest, proc, _, _ = run
    warnings = [line for line in proc.stdout.splitlines() if "customer_type" in line and line.startswith("warning")]
    assert warnings == ["warning: models/marts/_marts.yml: model 'orders' documents column 'customer_type', which its "
                        "relation \"bakery\".\"main\".\"orders\" does not have; the semantic layer's metrics on it "
                        "read the columns the relation has"]
    sql = (project.project_dir / "models" / "dptool_semantic" / "revenue.sql").read_text(encoding="utf-8")
    assert "dptool_customer.customer_type as customer_type" in sql
    assert "dptool_base.customer_type" not in sql
    # read from the docs alone (no warehouse), the documented column would hide the joined one
    docs_only = semantic.model_sql(semantic.read_layer(manifest, "bakery").metrics["revenue"])
    assert "dptool_base.customer_type" in docs_only


def test_a_measure_that_creates_its_metric_is_labelled_from_its_name(run):
    """`create_metric: true` (dbt labels the metric with its name): Orders, and tasks whose questions say it."""
    project, manifest, _, _, tasks = run
    catalog = _catalog(project, manifest)
    assert manifest["metrics"]["metric.bakery.orders"]["label"] == "orders"
    assert catalog.metrics["orders_metric"].label == "Orders"
    mine = [t for t in tasks if t["metric_ids"][:1] == ["orders_metric"]]
    assert mine and all("orders_metric" not in t["question"] for t in mine)


def test_table_true_on_a_semantic_models_node(run):
    """customers is declared `table: true` and is a semantic model's node: one table, in the semantic layer's domain
    (before, the table's own domain left its dimensions out of the domain's catalog: a KeyError when sampling)."""
    project, manifest, _, _, tasks = run
    catalog = _catalog(project, manifest)
    assert catalog.tables["model.bakery.customers"].domain == catalog.metrics["new_customers"].domain == "bakery"
    domain = catalog.subset("bakery")
    assert "model.bakery.customers.region" in domain.dimensions
    assert any(t["metric_ids"][:1] == ["new_customers"] for t in tasks)


def test_a_rule_names_a_metric_by_either_name(run):
    """`modifies: [orders]` names the semantic metric dptool declares as orders_metric; a name that is neither is one
    error that lists dptool's ids with their semantic-layer names."""
    project, manifest, _, _, tasks = run
    catalog = _catalog(project, manifest)
    assert catalog.rules["exclude_test_customers"].modifies == ("revenue", "orders_metric", "new_customers")
    assert any("exclude_test_customers" in t["rule_ids"] and t["metric_ids"][0] == "orders_metric" for t in tasks)
    edited = copy.deepcopy(manifest)
    macro = edited["macros"]["macro.bakery.rule__exclude_test_customers"]
    macro["meta"]["dptool"]["rule"]["modifies"] = ["ordres"]
    with pytest.raises(DptoolError) as info:
        load_catalog(edited)
    message = str(info.value)
    assert "meta.dptool.rule.modifies names unknown metric 'ordres'; a rule names a metric by dptool's id or its " \
           "semantic-layer name, and the metrics are: average_item_price, " in message
    assert "orders_metric (semantic layer: orders)" in message
    macro["meta"]["dptool"]["rule"]["modifies"] = ["revenue_mtd"]
    with pytest.raises(DptoolError, match="names 'revenue_mtd', a semantic-layer metric dptool skips: cumulative"):
        load_catalog(edited)


def test_an_approximate_percentile_is_stated(run):
    _, _, proc, out, _ = run
    kb = next(out.glob("kb/**/metrics.md")).read_text(encoding="utf-8")
    section = kb.split("## Order Value, 90th Percentile\n")[1].split("\n## ")[0]
    assert "PERCENTILE_0.9(order_total) over orders (exact here; the dbt semantic layer computes this percentile " \
           "approximately: use_approximate_percentile)" in section
    assert "note: metric 'p90_order_value': the semantic layer computes its percentile approximately" in proc.stdout


def test_inputs_on_two_semantic_models(run):
    """items / orders share the date their rows are placed by (ordered_at): sliced by orders' dimensions, with a
    period; orders / new customers are placed by different dates: no period, said so, whole-history tasks."""
    project, manifest, proc, _, tasks = run
    catalog = _catalog(project, manifest)
    per_order = catalog.metrics["items_per_order"]
    assert per_order.components == ("items", "orders_metric")
    assert per_order.period == "model.bakery.order_items.ordered_at"
    assert {"channel", "order_status"} <= set(per_order.columns)
    per_customer = catalog.metrics["orders_per_new_customer"]
    assert per_customer.period == "" and "ordered_at" not in per_customer.columns
    assert ("note: metric 'orders_per_new_customer': its inputs place their rows in time by different dates "
            "(customers.signup_date, orders.ordered_at): it has no period, and its tasks read the whole history"
            ) in proc.stdout
    assert all("window" not in t["slice"] for t in tasks if t["metric_ids"][:1] == ["orders_per_new_customer"])


def test_a_metric_without_a_task_says_why(run, tmp_path):
    """A metric whose every question would name an identifier (its label is a column) ends with no task: a warning
    names it and the reason, in generate's output and in card.md."""
    project, _, _, _, _ = run
    root = tmp_path / "project"
    shutil.copytree(project.project_dir, root, symlinks=True, ignore=shutil.ignore_patterns("bundle", "logs"))
    metrics = root / "models" / "marts" / "_metrics.yml"
    text = metrics.read_text(encoding="utf-8")
    metrics.write_text(text.replace("    label: Items Sold\n", "    label: order_item_id\n"), encoding="utf-8")
    DbtProject(root).run("parse")
    proc = cli("generate", "--project-dir", str(root), "--out", str(root / "bundle"), *ARGS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next((x for x in proc.stdout.splitlines() if x.startswith("warning: metric items: no task")), None)
    assert line is not None, proc.stdout
    assert "candidates were dropped: " in line and "identifier" in line, line
    card = (root / "bundle" / "card.md").read_text(encoding="utf-8")
    assert "## Warnings" in card and f"- {line.removeprefix('warning: ')}" in card


@pytest.mark.skipif(Version(version("dbt-core")) < Version("1.12"),
                    reason="dbt-core 1.12's semantic-layer spec: `make test-dbt112` runs it")
def test_dbt_112_spec(tmp_path):
    """The same marts in dbt 1.12's spec (semantic models on their models, entities and dimensions on columns, metrics
    without measures, an expression time dimension under derived_semantics): imported alike, and MetricFlow agrees."""
    root = _copy(tmp_path / "project")
    for name in ("_semantic_models.yml", "_metrics.yml"):
        (root / "models" / "marts" / name).unlink()
    shutil.copy(FIXTURE.parent / "bakery_latest_spec" / "_marts.yml", root / "models" / "marts" / "_marts.yml")
    rules = root / "macros" / "rules" / "_rules.yml"
    text = rules.read_text(encoding="utf-8").replace("[revenue, orders, new_customers]", "[revenue, order_count]")
    rules.write_text(text.replace("[revenue, item_revenue]", "[revenue, completed_revenue]"), encoding="utf-8")
    project = _set_up(root)
    manifest = json.loads(project.manifest_path.read_text(encoding="utf-8"))
    assert not manifest["semantic_models"]["semantic_model.bakery.orders"]["measures"]  # no measures in this spec
    proc = cli("generate", "--project-dir", str(root), "--out", str(root / "bundle"), *ARGS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    catalog = _catalog(project, manifest)
    assert set(catalog.semantic.metrics) == {"completed_revenue", "first_week_order_rate", "items", "items_per_order",
                                             "new_customers", "north_revenue", "order_count", "ordering_customers",
                                             "revenue"}
    assert set(catalog.semantic.skipped) == {"revenue_mtd"}
    assert catalog.metrics["order_count"].label == "Order Count"  # dbt 1.12 labels it "order_count"
    assert catalog.metrics["revenue"].period == "model.bakery.orders.ordered_at"
    assert catalog.tables["model.bakery.customers"].domain == "bakery"
    assert "MetricFlow parity: 9 of 9 metrics equal" in proc.stdout, proc.stdout
