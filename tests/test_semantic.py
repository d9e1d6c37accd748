"""Metrics from the dbt semantic layer, end to end on DuckDB with the subscriptions fixture project.

The fixture is copied, `dptool init` / `dbt deps` / `dbt build` / `dptool generate` run once for the
module (dbt for real, on a real DuckDB file); the tests read what they produced. Manifest edits (the other
manifest shape, a declaration that wins, filters that do not translate) run on copies of its manifest.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

import duckdb
import pytest

from dptool.errors import DptoolError
from dptool.project import semantic
from dptool.project.catalog import load_catalog
from dptool.project.dbt import DbtProject
from dptool.project.prepare import manifest_behind_generated, prepare_catalog
from tests.subscriptions import GENERATE_ARGS, cli, copy_fixture, metric_sql, set_up

EXPECTED = Path(__file__).parent / "fixtures" / "subscriptions_semantic.json"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """(project, the manifest `dbt build` wrote, the `dptool generate` process, the bundle folder)."""
    root = copy_fixture(tmp_path_factory.mktemp("subscriptions") / "project")
    project = set_up(root)
    manifest = json.loads(project.manifest_path.read_text(encoding="utf-8"))
    out = root / "bundle"
    # relative --rules-dir, from another working directory: resolved against the project
    proc = cli("generate", "--project-dir", str(root), "--out", str(out), *GENERATE_ARGS, cwd=root.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return project, manifest, proc, out


def _layer(manifest: dict) -> dict:
    layer = semantic.read_layer(manifest, "subscriptions")
    return {
        "metrics": {n: {"value": m.decl["value"], "format": m.decl["format"], "formula": m.decl["formula"],
                        "components": list(m.components), "inputs": m.decl.get("components", []),
                        "tables": [t.split(".")[-1] for t in m.tables],
                        "columns": [c for _, c in m.columns]} for n, m in sorted(layer.metrics.items())},
        "skipped": dict(sorted(layer.skipped.items())),
        "dimensions": sorted(".".join([d[0].split(".")[-1], d[1], d[2]]) for d in layer.dimensions),
        "joins": sorted(f"{a.split('.')[-1]}.{b} -> {c.split('.')[-1]}.{d}" for a, b, c, d in layer.joins),
    }


def test_translation_of_the_fixture(run):
    """Simple metrics become aggregates over one row grain, ratio and derived metrics composites of their inputs
    (each with its own filter); the expected text is a fixture."""
    _, manifest, _, _ = run
    assert _layer(manifest) == json.loads(EXPECTED.read_text(encoding="utf-8"))


# The same metrics written by hand from MetricFlow's definitions, over the marts dbt built.
BY_HAND = {
    "revenue": "select sum(amount_due) from {fct_invoices} where invoice_status = 'paid'",
    "billings": "select sum(amount_due) from {fct_invoices}",
    "invoice_count": "select count(*) from {fct_invoices}",
    "average_invoice_value": "select avg(amount_due) from {fct_invoices}",
    "paying_customers": "select count(distinct customer_id) from {fct_invoices} where invoice_status = 'paid'",
    "enterprise_revenue": "select sum(i.amount_due) from {fct_invoices} i join {dim_customers} c "
                          "using (customer_id) where i.invoice_status = 'paid' and c.segment = 'enterprise'",
    "refund_rate": "select avg(case when invoice_status = 'refunded' then 1.0 else 0.0 end) from {fct_invoices}",
    "discount_rate": "select sum(discount) / sum(subtotal) from {fct_invoices}",
    "net_revenue": "select sum(case when invoice_status = 'paid' then amount_due else 0 end) "
                   "- sum(case when invoice_status = 'refunded' then amount_due else 0 end) from {fct_invoices}",
    "revenue_per_paying_customer": "select sum(amount_due) / count(distinct customer_id) from {fct_invoices} "
                                   "where invoice_status = 'paid'",
    "churn_rate": "select avg(case when canceled_on is not null then 1.0 else 0.0 end) from {fct_subscriptions}",
    "cancellations": "select count(canceled_on) from {fct_subscriptions}",
    "new_mrr": "select sum(mrr) from {fct_subscriptions}",
    "new_customers": "select count(*) from {dim_customers}",
    "trials": "select count(*) from {fct_trials}",
}


def test_metric_values_match_metricflow_semantics(run):
    """Each generated model's value, run on the built warehouse, equals the metric computed by hand."""
    project, manifest, _, _ = run
    folder = project.project_dir / "models" / "dptool_semantic"
    layer = semantic.read_layer(manifest, "subscriptions")
    relations = {n["name"]: n["relation_name"] for n in manifest["nodes"].values() if n.get("relation_name")}
    con = duckdb.connect(project.connection().path, read_only=True)
    try:
        for name, sql in sorted(BY_HAND.items()):
            got = con.execute(metric_sql(name, layer, folder, manifest)).fetchone()[0]
            want = con.execute(sql.format(**relations)).fetchone()[0]
            assert got is not None and float(got) == pytest.approx(float(want), rel=1e-12), name
    finally:
        con.close()


def test_generate_names_every_skipped_metric_and_goes_on(run):
    _, _, proc, out = run
    for line in ("skipped metric revenue_mtd: cumulative metric (month-to-date)",
                 "skipped metric trial_conversion_rate: conversion metric (trials_started -> subscriptions_started "
                 "by customer within 30 days)",
                 "skipped metric revenue_growth_mom: input 'revenue_last_month' is offset by 1 month",
                 "semantic layer: 20 metrics translated, 3 skipped"):
        assert line in proc.stdout
    # inputs on two semantic models (invoices, customers) placed in time by different dates: no period, said so
    assert ("note: metric 'revenue_per_new_customer': its inputs place their rows in time by different dates "
            "(dim_customers.signup_date, fct_invoices.invoiced_on): it has no period") in proc.stdout
    assert (out / "tasks.jsonl").is_file()


def test_metricflow_computes_every_imported_metric_alike(run):
    """MetricFlow, the semantic layer's own engine, and dptool's macros agree on every imported metric, overall, by
    month and by two dimensions (generate's parity stage); card.md says so."""
    _, _, proc, out = run
    assert "MetricFlow parity: 20 of 20 metrics equal" in proc.stdout, proc.stdout
    assert "MetricFlow parity" not in "".join(line for line in proc.stdout.splitlines() if line.startswith("warning"))
    card = (out / "card.md").read_text(encoding="utf-8")
    assert "## MetricFlow parity\n\n- 20 of 20 metrics equal" in card
    assert "| revenue_per_new_customer | overall, by acquisition_channel, by country | equal |" in card


def test_bundle_from_semantic_metrics(run):
    """Tasks over semantic metrics, with rules; gold_sql reads only the four agent-visible tables."""
    project, _, proc, out = run
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    sql_tasks = [t for t in tasks if t["gold_sql"]]
    assert len(sql_tasks) >= 40, proc.stdout
    metrics = {t["metric_ids"][0] for t in sql_tasks}
    assert {"revenue", "churn_rate", "revenue_per_paying_customer"} <= metrics
    # refunds and enterprise invoices are few in the fixture: each candidate of the metrics that rest on them (their
    # filter keeps only those rows) rests on fewer than the minimum support, and generate says so rather than losing
    # the metric silently
    for metric in ("refund_rate", "refunded_amount", "net_revenue", "enterprise_revenue"):
        assert metric not in metrics
        warning = next(line for line in proc.stdout.splitlines()
                       if line.startswith(f"warning: metric {metric}: no task"))
        assert "thin_support" in warning
    assert len(metrics) >= 15
    assert {r for t in sql_tasks for r in t["rule_ids"]} == {
        "exclude_test_accounts", "annual_prepayment_spread", "bank_transfer_settlement", "zero_dollar_invoices",
        "early_cancellation"}
    con = duckdb.connect(str(out / "warehouse.duckdb"), read_only=True)
    try:
        tables = sorted(".".join(r) for r in con.execute(
            "select table_schema, table_name from information_schema.tables").fetchall())
        assert tables == ["subscriptions.dim_customers", "subscriptions.fct_invoices",
                          "subscriptions.fct_subscriptions", "subscriptions.fct_trials"]
        for t in sql_tasks[:10]:  # export already checked every task; these once more, by hand
            assert con.execute(t["gold_sql"]).fetchall()
    finally:
        con.close()
    generated = sorted(p.name for p in (project.project_dir / "models" / "dptool_semantic").iterdir())
    assert "revenue.sql" in generated and "_dptool_semantic.yml" in generated
    assert "revenue_mtd.sql" not in generated  # skipped metrics get no model


def test_rule_documents_from_the_rules_dir(run):
    """Markdown files of --rules-dir are rule documents: in kb/, and as docs blocks that dbt docs show."""
    project, _, _, out = run
    (rules,) = (out / "kb").glob("*/rules")
    assert "CS-002 — Zero-dollar invoices" in (rules / "zero_dollar_invoices.md").read_text("utf-8")
    assert "FIN-017" in (rules / "bank_transfer_settlement.md").read_text("utf-8")  # a docs block
    manifest = json.loads(project.manifest_path.read_text(encoding="utf-8"))  # written by generate's dbt runs
    docs = {d["name"]: d["block_contents"] for d in manifest["docs"].values()}
    assert "45 days" in docs["rule__early_cancellation"]
    # without --rules-dir (dptool graph, ablate), the catalog of that manifest reads the docs block generate wrote
    assert "45 days" in load_catalog(manifest).rules["early_cancellation"].document
    # with it, the file wins
    changed = load_catalog(manifest, rule_documents={"early_cancellation": "Changed. " + "word " * 25})
    assert changed.rules["early_cancellation"].document.startswith("Changed.")


def test_generate_parses_only_when_what_it_wrote_for_the_catalog_is_not_in_the_manifest(run, tmp_path):
    project, _, _, _ = run
    manifest = json.loads(project.manifest_path.read_text(encoding="utf-8"))
    assert not manifest_behind_generated(project, manifest)  # generate's closing parse took them in
    clone = DbtProject(shutil.copytree(project.project_dir, tmp_path / "p", ignore=shutil.ignore_patterns("*.duckdb*")))
    folder = clone.project_dir / "models" / "dptool_semantic"
    assert not manifest_behind_generated(clone, manifest)
    (folder / "revenue.sql").unlink()  # a metric model the manifest still has
    assert manifest_behind_generated(clone, manifest)
    shutil.copy(project.project_dir / "models" / "dptool_semantic" / "revenue.sql", folder / "revenue.sql")
    os.utime(folder / "revenue.sql", (clone.manifest_path.stat().st_mtime - 60,) * 2)
    assert not manifest_behind_generated(clone, manifest)
    docs = folder / "_dptool_rule_docs.md"  # rewritten after dbt wrote the manifest: a rule document changed
    docs.write_text(docs.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    os.utime(docs, (clone.manifest_path.stat().st_mtime + 60,) * 2)
    assert manifest_behind_generated(clone, manifest)


def _simple_to_aggregation_params(manifest: dict) -> dict:
    """The manifest as newer dbt writes simple metrics: type_params.metric_aggregation_params, no measure."""
    manifest = copy.deepcopy(manifest)
    measures = {m["name"]: (sm["name"], m, sm.get("defaults") or {})
                for sm in manifest["semantic_models"].values() for m in sm.get("measures") or []}
    for metric in manifest["metrics"].values():
        params = metric["type_params"]
        if metric["type"] != "simple" or not params.get("measure"):
            continue
        sm_name, measure, defaults = measures[params["measure"]["name"]]
        params["metric_aggregation_params"] = {
            "semantic_model": sm_name, "agg": measure["agg"], "agg_params": measure.get("agg_params"),
            "agg_time_dimension": measure.get("agg_time_dimension") or defaults.get("agg_time_dimension"),
            "non_additive_dimension": None, "expr": measure.get("expr")}
        params["measure"] = None
        params["input_measures"] = []
    for sm in manifest["semantic_models"].values():
        sm["measures"] = []
    return manifest


def test_both_manifest_shapes_translate_alike(run):
    _, manifest, _, _ = run
    newer = _simple_to_aggregation_params(manifest)
    assert all(m["type_params"]["measure"] is None for m in newer["metrics"].values() if m["type"] == "simple")
    old, new = _layer(manifest), _layer(newer)
    assert new["metrics"] == old["metrics"]
    # the cumulative and conversion metrics still read measures, which this shape has no more
    assert set(new["skipped"]) == set(old["skipped"])


def test_a_dptool_declaration_wins(run):
    """A model declaring meta.dptool.metric under a semantic metric's name is the catalog metric."""
    _, manifest, _, _ = run
    manifest = copy.deepcopy(manifest)
    invoices = manifest["nodes"]["model.subscriptions.fct_invoices"]
    declared = copy.deepcopy(invoices)
    declared.update(name="revenue", unique_id="model.subscriptions.revenue", alias="revenue", relation_name=None,
                    original_file_path="models/marts/revenue.sql",
                    depends_on={"nodes": ["model.subscriptions.fct_invoices"], "macros": []})
    declared["config"] = {**declared["config"], "materialized": "ephemeral",
                          "meta": {"dptool": {"metric": {"label": "Recognized Revenue", "value": "sum(amount_due)"}}}}
    declared["meta"] = declared["config"]["meta"]
    manifest["nodes"][declared["unique_id"]] = declared
    # a plain model named like a semantic metric: the semantic metric's model gets another name
    trials = copy.deepcopy(manifest["nodes"]["model.subscriptions.fct_trials"])
    trials.update(name="trials", unique_id="model.subscriptions.trials", alias="trials", relation_name=None)
    manifest["nodes"][trials["unique_id"]] = trials
    layer = semantic.read_layer(manifest, "subscriptions")
    assert layer.skipped["revenue"] == "declared by the dptool metric model model.subscriptions.revenue, which wins"
    assert "trials" not in layer.metrics and layer.metrics["trials_metric"].metric == "trials"
    assert "metric 'trials' is the catalog metric 'trials_metric' (a model named 'trials' exists)" in layer.notes
    catalog = load_catalog(manifest, rule_documents={
        "zero_dollar_invoices": "x " * 30, "early_cancellation": "y " * 30})
    assert catalog.metrics["revenue"].label == "Recognized Revenue"
    assert catalog.metrics["revenue"].value == "sum(amount_due)"
    assert catalog.metrics["net_revenue"].value == "revenue - refunds"  # still from the semantic layer
    assert catalog.metrics["net_revenue"].components == ("revenue", "refunded_amount")


def _edit_metric(manifest: dict, name: str, edit) -> dict:
    manifest = copy.deepcopy(manifest)
    edit(manifest["metrics"][f"metric.subscriptions.{name}"], manifest)
    return manifest


def test_what_does_not_translate_is_skipped_with_its_reason(run):
    _, manifest, _, _ = run

    def metric_filter(m, _):
        template = "{{ Metric('revenue', group_by=['customer']) }} > 100"
        m["filter"] = {"where_filters": [{"where_sql_template": template}]}

    def unknown_dimension(m, _):
        m["filter"] = {"where_filters": [{"where_sql_template": "{{ Dimension('invoice__color') }} = 'red'"}]}

    def semi_additive(m, mf):
        sm = mf["semantic_models"]["semantic_model.subscriptions.subscriptions"]
        next(x for x in sm["measures"] if x["name"] == "new_mrr_amount")["non_additive_dimension"] = {
            "name": "started_on", "window_choice": "max", "window_groupings": []}

    def percentile(m, mf):
        sm = mf["semantic_models"]["semantic_model.subscriptions.invoices"]
        measure = next(x for x in sm["measures"] if x["name"] == "average_amount_due")
        measure.update(agg="percentile", agg_params={"percentile": 0.9, "use_discrete_percentile": False})

    cases = {
        ("enterprise_revenue", metric_filter): "the filter \"{{ Metric('revenue', group_by=['customer']) }} > 100\" "
                                               "reads metric 'revenue': a filter on another metric's value is not "
                                               "one aggregate over rows",
        ("billings", unknown_dimension): "the filter names 'invoice__color': semantic model 'invoices' has no "
                                         "dimension 'color'",
        ("new_mrr", semi_additive): "measure 'new_mrr_amount' is semi-additive (non_additive_dimension 'started_on'): "
                                    "its value is a snapshot per time window, not one aggregate over rows",
    }
    for (name, edit), reason in cases.items():
        layer = semantic.read_layer(_edit_metric(manifest, name, edit), "subscriptions")
        assert layer.skipped[name] == reason
        assert len(layer.metrics) == 19  # every other metric still translates
    # a metric that reads an untranslatable one is skipped with the same reason
    layer = semantic.read_layer(_edit_metric(manifest, "revenue", metric_filter), "subscriptions")
    assert layer.skipped["net_revenue"] == layer.skipped["revenue"]
    assert set(layer.skipped) - set(_layer(manifest)["skipped"]) == {"revenue", "net_revenue",
                                                                     "revenue_per_paying_customer",
                                                                     "revenue_per_new_customer"}
    layer = semantic.read_layer(_edit_metric(manifest, "average_invoice_value", percentile), "subscriptions")
    assert layer.metrics["average_invoice_value"].decl["value"] == \
        "percentile_cont(0.9) within group (order by amount_due)"


def test_a_filter_on_time_and_entities(run):
    """TimeDimension with a grain, metric_time and Entity resolve to columns of the metric's model."""
    _, manifest, _, _ = run

    def edit(m, _):
        m["filter"] = {"where_filters": [
            {"where_sql_template": "{{ TimeDimension('metric_time', 'month') }} >= '2024-01-01'"},
            {"where_sql_template": "{{ Entity('customer') }} is not null"},
            {"where_sql_template": "{{ Dimension('subscription__plan_name') }} = 'Scale'"}]}

    layer = semantic.read_layer(_edit_metric(manifest, "billings", edit), "subscriptions")
    assert layer.metrics["billings"].decl["value"] == (
        "sum(case when (date_trunc('month', invoiced_on) >= '2024-01-01') and (customer_id is not null) "
        "and (plan_name = 'Scale') then amount_due end)")


def test_no_declarations_at_all(run, tmp_path):
    """A dbt project with neither dptool declarations nor semantic metrics: one line, what to declare."""
    project, manifest, _, _ = run
    bare = copy.deepcopy(manifest)
    bare["metrics"], bare["semantic_models"] = {}, {}
    bare["macros"] = {k: v for k, v in bare["macros"].items() if "rule__" not in k}
    root = tmp_path / "bare"
    (root / "target").mkdir(parents=True)
    for name in ("dbt_project.yml", "profiles.yml"):
        shutil.copy2(project.project_dir / name, root / name)
    for name in ("models", "seeds", "macros"):  # the files the manifest names (a manifest of gone files is stale)
        shutil.copytree(project.project_dir / name, root / name)
    (root / "target" / "manifest.json").write_text(json.dumps(bare), encoding="utf-8")
    proc = cli("generate", "--project-dir", str(root), "--out", str(tmp_path / "bundle"))
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert lines[0].startswith("error: ") and "no metric declared" in lines[0]
    assert "dbt semantic layer" in lines[0] and "meta: {dptool: {metric: {value: 'avg(x)'}}}" in lines[0]
    assert not (tmp_path / "bundle").exists()


def test_a_package_version_that_is_not_the_cli_version(run, tmp_path):
    """The dptool dbt package in dbt_packages/ must be the CLI's version: checked at every generate."""
    project, _, _, _ = run
    root = tmp_path / "project"
    shutil.copytree(project.project_dir, root, symlinks=True,
                    ignore=shutil.ignore_patterns("*.duckdb", "bundle", "dptool_gold", "logs"))
    (root / "dbt_packages" / "dptool").unlink()
    old = root / "dbt_packages" / "dptool"
    old.mkdir()
    (old / "dbt_project.yml").write_text('name: dptool\nversion: "0.0.9"\nconfig-version: 2\n', encoding="utf-8")
    proc = cli("generate", "--project-dir", str(root), *GENERATE_ARGS, cwd=root)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        f"error: {old}: the dptool dbt package is version 0.0.9 and the dptool CLI is 0.1.0; run `dptool init`, "
        "then `dbt deps`, so that both are the same")
    shutil.rmtree(old)
    proc = cli("generate", "--project-dir", str(root), *GENERATE_ARGS, cwd=root)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f"error: {root}: the dptool dbt package is not installed; run `dptool init`, "
                                   "then `dbt deps`")


def test_a_profile_that_cannot_connect(run, tmp_path):
    """The fixture's PostgreSQL target, pointed at a port where nothing listens: one line, exit 1."""
    project, _, _, _ = run
    root = tmp_path / "project"
    shutil.copytree(project.project_dir, root, symlinks=True,
                    ignore=shutil.ignore_patterns("*.duckdb", "bundle", "dptool_gold", "logs"))
    env = {"DPTOOL_PG_HOST": "127.0.0.1", "DPTOOL_PG_PORT": "1"}
    args = ("generate", "--project-dir", str(root), "--dbt-target", "pg", "--out", str(root / "pg_bundle"),
            *GENERATE_ARGS)
    # first: the manifest is DuckDB's, whose relation names mean nothing on PostgreSQL
    manifest = json.loads((root / "target" / "manifest.json").read_text(encoding="utf-8"))
    with pytest.raises(DptoolError) as info:
        prepare_catalog(DbtProject(root, target="pg"), manifest, rules_dir="business_rules", echo=lambda _: None)
    assert str(info.value) == (f"{root / 'target' / 'manifest.json'}: written for a duckdb target, and this run's "
                               "target is postgres; run `dbt build` for this target first")
    manifest["metadata"]["adapter_type"] = "postgres"  # as if `dbt build --target pg` had run
    (root / "target" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    proc = cli(*args, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("error: profile 'subscriptions', target 'pg' (postgres): cannot connect: ")
    assert "port 1 failed: Connection refused" in lines[0]
    assert not (root / "pg_bundle").exists()


def test_no_manifest(tmp_path):
    root = copy_fixture(tmp_path / "project")
    proc = cli("generate", "--project-dir", str(root))
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f"error: {root / 'target' / 'manifest.json'}: no manifest; run `dbt parse` "
                                   f"(or `dbt build`) in {root} first")


def test_dimension_false_keeps_a_column_out_of_the_dimensions(run):
    """`dimension: false` on a semantic dimension, or on its node's column, and the column is no dimension (a
    DECIMAL amount a semantic model declares categorical, say); a declared table's column likewise."""
    _, manifest, _, _ = run
    manifest = copy.deepcopy(manifest)
    customers = manifest["semantic_models"]["semantic_model.subscriptions.customers"]
    next(d for d in customers["dimensions"] if d["name"] == "country")["config"]["meta"] = {
        "dptool": {"dimension": False}}
    subscriptions = manifest["nodes"]["model.subscriptions.fct_subscriptions"]
    column = subscriptions["columns"].setdefault("billing_period", {"name": "billing_period"})
    column["config"] = {"meta": {"dptool": {"dimension": False}}}
    column["meta"] = {"dptool": {"dimension": False}}
    docs = {"zero_dollar_invoices": "x " * 30, "early_cancellation": "y " * 30}
    before = {d.id for d in load_catalog(run[1], rule_documents=docs).dimensions.values()}
    after = {d.id for d in load_catalog(manifest, rule_documents=docs).dimensions.values()}
    assert before - after == {"model.subscriptions.dim_customers.country",
                              "model.subscriptions.fct_subscriptions.billing_period"}
    assert "dim_customers.country.categorical" not in _layer(manifest)["dimensions"]

    # a table declared with meta.dptool: false is as good as no declaration
    trials = manifest["nodes"]["model.subscriptions.fct_trials"]
    trials["config"]["meta"] = trials["meta"] = {"dptool": {"table": True}}
    trials["columns"] = {"trial_id": {"name": "trial_id", "meta": {"dptool": {"dimension": False}}}}
    assert "model.subscriptions.fct_trials.trial_id" not in load_catalog(manifest, rule_documents=docs).dimensions
