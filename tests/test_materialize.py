"""Stage 5: the gold model of each candidate and the properties file beside them."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb
import jinja2
import pytest
import yaml
from jinja2 import nodes

from dptool.generate.instantiate import Candidate, Window, period_expression, window_predicates
from dptool.generate.materialize import (
    BLANK_SPEC,
    GOLD_DIR,
    GOLD_TAG,
    GROUP,
    OVERVIEW,
    _support,
    compile_text,
    materialize,
    model_sql,
    overview_rows,
    overview_sql,
    properties,
    rows_differ,
    same_rows,
    write_models,
    write_properties,
)
from dptool.generate.sample import Skeleton
from dptool.project.catalog import load_catalog
from dptool.project.dbt import DbtProject
from dptool.project.warehouse import Warehouse
from dptool.sql import VariantWriter, equals, in_window, pretty, rename_relations, variant_query

FIXTURES = Path(__file__).parent / "fixtures"
SHOP = load_catalog(json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8")))
TABLES = ("model.shop.customers", "model.shop.orders", "model.shop.payments")
Q3_2017 = Window(date(2017, 7, 1), date(2017, 10, 1), "Q3 2017")
H2_2017 = Window(date(2017, 7, 1), date(2018, 1, 1), "the second half of 2017")
DBT_JINJA = jinja2.Environment(extensions=["jinja2.ext.do"])  # dbt's Jinja has the `do` statement
QUESTION = "What was our Average Order Value for city Sant'Ana in Q3 2017? Give the answer in BRL."


def window_slice(w: Window) -> dict:
    return {"start": w.start.isoformat(), "end": w.end.isoformat(), "label": w.label}


def point_query(city: str = "Sant'Ana") -> Candidate:
    rules = ("exclude_tests", "capital_override")
    skeleton = Skeleton("avg_order_value", "model.shop.customers.city", "spatial", rules, TABLES)
    where = [*in_window("ordered_at", Q3_2017.start, Q3_2017.end, "duckdb"), equals("city", city, "duckdb")]
    return Candidate(skeleton, "point_query", where, [], "value", None, None,
                     {"window": window_slice(Q3_2017), "city": city}, Q3_2017, "t_0001")


def ranking() -> Candidate:
    skeleton = Skeleton("avg_order_value", "model.shop.payments.method", "categorical", (), TABLES)
    where = in_window("ordered_at", H2_2017.start, H2_2017.end, "duckdb")
    return Candidate(skeleton, "ranking", where, ["method"], "ranking", 3, 30,
                     {"window": window_slice(H2_2017), "min_group_rows": 30}, H2_2017, "t_0002")


def gold_call_arguments(sql: str) -> dict:
    """The keyword arguments of the dptool.gold call, as Jinja (and so dbt) reads the literals."""
    template = DBT_JINJA.parse(sql)
    (call,) = [n for n in template.find_all(nodes.Call) if isinstance(n.node, nodes.Getattr) and n.node.attr == "gold"]
    return {kw.key: kw.value.as_const() for kw in call.kwargs}


def test_model_sql_point_query():
    assert model_sql(point_query()) == (FIXTURES / "gold_model_t_0001.sql").read_text(encoding="utf-8")


def test_model_sql_ranking():
    assert model_sql(ranking()) == (FIXTURES / "gold_model_t_0002.sql").read_text(encoding="utf-8")


def test_model_sql_is_tagged():
    assert GOLD_TAG == "dptool_gold"
    assert "tags=['dptool_gold']" in model_sql(ranking())
    assert GOLD_DIR.as_posix() == "models/dptool_gold"


class _Rule:
    """Stands in for a rule macro in dbt's context: records how it is called."""

    def __init__(self, name: str, calls: list):
        self.name, self.calls = name, calls

    def __call__(self, metric, q):
        self.calls.append((self.name, metric, q))
        q["where"].append("x > 0")  # a rule changes the spec it is given
        return q


VAR = lambda name, default=None: default  # noqa: E731 (dbt's var(), no var set)


def test_each_applied_rule_is_called_while_dbt_parses_and_never_when_it_runs():
    """dbt lists in depends_on.macros the macros a model calls itself: the gold model calls each rule it applies
    (a counterfactual's withdrawn rule too), at parse time only, so that its compiled SQL is dptool.gold's alone."""
    sql = model_sql(counterfactual())
    for execute, expected in ((False, ["exclude_tests", "capital_override"]), (True, [])):
        calls = []
        rules = {f"rule__{r}": _Rule(r, calls) for r in ("exclude_tests", "capital_override")}
        rendered = DBT_JINJA.from_string(sql).render(config=lambda **_: "", var=VAR, dptool=_Recorder(),
                                                     execute=execute, **rules)
        assert [name for name, _, _ in calls] == expected
        assert all(metric == "avg_order_value" for _, metric, _ in calls)
        assert rendered.strip().splitlines()[-1].startswith("-- written by")  # nothing rendered but the header
    assert "{% for rule in" not in model_sql(ranking())  # a task without rules calls none


class _Gold:
    """dptool.gold as dbt renders it when it compiles: SQL over several lines, ending with a newline."""

    @staticmethod
    def gold(**kwargs):
        # every argument in the SQL: equal SQL means equal arguments
        return f"with dptool_base as (\n  select {json.dumps(kwargs, sort_keys=True)!r}\n)\nselect * from dptool_base\n"

    date_trunc = staticmethod(lambda part, column: f"date_trunc('{part}', {column})")


@pytest.mark.parametrize("make", ["counterfactual", "ranking", "trend"])  # with rules (and lineage), without, a period
def test_the_text_materialize_compiles_renders_what_the_gold_model_renders(make):
    """compile_text leaves out the config() call and the lineage: both render nothing when dbt compiles."""
    c = globals()[make]()
    text, model = compile_text(c), model_sql(c)
    assert "config(" not in text and "lineage" not in text and "config(" in model
    rules = {f"rule__{r}": _Rule(r, []) for r in ("exclude_tests", "capital_override")}
    # fromjson as dbt's context has it (json.loads)
    context = {"config": lambda **_: "", "var": VAR, "dptool": _Gold(), "dbt": _Gold(), "execute": True,
               "fromjson": json.loads, **rules}
    assert "fromjson(" in text and "fromjson(" not in model
    assert DBT_JINJA.from_string(text).render(**context) == DBT_JINJA.from_string(model).render(**context)


def test_the_blank_spec_has_every_key_of_the_spec_rules_receive():
    macro = (Path(__file__).parent.parent / "dptool" / "dbt_package" / "macros" / "metric_spec.sql").read_text("utf-8")
    returned = macro[macro.index("return({"):macro.index("}) }}")]
    assert set(BLANK_SPEC) == set(re.findall(r"'(\w+)':", returned))


def test_model_sql_arguments_read_back_by_jinja():
    c = ranking()
    assert gold_call_arguments(model_sql(c)) == {
        "metric": "avg_order_value", "rules": [], "where": c.where, "group_by": ["method"], "shape": "ranking",
        "k": 3, "min_rows": 30,
    }


@pytest.mark.parametrize("city", ["Sant'Ana", 'Rua "Velha"', "São João d'Aliança", "C:\\temp", "tab\there"])
def test_slice_value_survives_jinja(city):
    c = point_query(city)
    arguments = gold_call_arguments(model_sql(c))
    assert arguments["where"] == c.where
    assert arguments["rules"] == ["exclude_tests", "capital_override"]


def test_slice_value_outside_the_bmp_survives_jinja():
    c = point_query("Cacto \U0001F335 Store")
    assert gold_call_arguments(model_sql(c))["where"] == c.where


def test_properties_structure():
    props = properties([point_query(), ranking()], SHOP, {"t_0001": QUESTION})
    assert props["version"] == 2
    assert [m["name"] for m in props["models"]] == ["t_0001", "t_0002", OVERVIEW]
    assert props["groups"] == [GROUP]
    rule_task, plain_task, _ = props["models"]
    # the rule test only on the task that has rules
    assert rule_task["data_tests"] == [{"dptool.rule_changes_answer": {"arguments": {"variants": ["gold"]}}}]
    assert "data_tests" not in plain_task
    assert rule_task["config"]["meta"]["dptool"]["task"] == {
        "analysis_type": "point_query", "metric": "avg_order_value", "rules": ["exclude_tests", "capital_override"],
        "dimension": "city", "slice": {"window": window_slice(Q3_2017), "city": "Sant'Ana"},
    }


def test_properties_description_links_each_rule_doc_and_page():
    rule_task, plain_task, _ = properties([point_query(), ranking()], SHOP, {"t_0001": QUESTION})["models"]
    metric = ("Metric: Average Order Value — AVG(amount paid per order) "
              "([avg_order_value](#!/model/model.shop.avg_order_value))")
    assert rule_task["description"] == "\n".join([
        QUESTION, "", metric,
        "", "### Rule: Test Order Exclusion", "",
        "Macro: [rule__exclude_tests](#!/macro/macro.shop.rule__exclude_tests)",
        "", '{{ doc("rule__exclude_tests") }}',
        "", "### Rule: Capital District Override", "",
        "Macro: [rule__capital_override](#!/macro/macro.shop.rule__capital_override)",
        "", '{{ doc("rule__capital_override") }}',
    ])
    # without a question, the description says what the task is
    assert plain_task["description"] == f"ranking of Average Order Value\n\n{metric}"


def test_a_question_that_looks_like_jinja_is_shown_as_it_is():
    question = "Was the {{ share }} of {% orders %} above {# 3 #}?"
    rule_task, _, overview = properties([point_query(), ranking()], SHOP, {"t_0001": question})["models"]
    for text in (rule_task["description"], overview["description"]):
        assert DBT_JINJA.from_string(text).render(doc=lambda name: "").count(question) == 1


def _rendered_rows(description: str) -> dict[str, str]:
    """The field table of a description as dbt shows it: rendered as Jinja, each `| field | value |` row."""
    text = DBT_JINJA.from_string(description).render(doc=lambda name: "")
    rows = [line for line in text.splitlines() if line.startswith("| ") and line.endswith(" |")]
    assert rows[:2] == ["| field | value |", "| --- | --- |"]
    return {cells[0]: cells[1] for cells in (re.split(r"(?<!\\) \| ", row[2:-2]) for row in rows[2:])}


def test_a_gold_models_description_shows_the_fields_a_reviewer_checks_one_a_row():
    c = point_query()
    record = {"task_id": c.task_id, "analysis_type": "counterfactual", "rule_scope": "all",
              "rules_in_force": ["capital_override"], "withdrawn_rule": "exclude_tests",
              "gold": [{"city": "a|b {{ x }}", "value": 1.5}], "tolerance": {"rel_tol": 0.001, "abs_tol": 0.005},
              "support": {"min_rows": 30, "min_entities": 10, "entity": ["order_id"],
                          "groups": [{"group": "a", "rows": 71, "entities": 66}, {"group": "b", "rows": 40,
                                                                                  "entities": 31}], "removed": []}}
    rule_task, *_ = properties([c, ranking()], SHOP, {"t_0001": QUESTION}, records={c.task_id: record})["models"]
    fields = _rendered_rows(rule_task["description"])
    assert list(fields) == ["analysis type", "rule scope", "rules in force", "withdrawn rule", "gold answer",
                            "tolerance", "support"]
    assert fields["analysis type"] == "`counterfactual`" and fields["rule scope"] == "all but the withdrawn rule"
    assert fields["rules in force"] == "[rule__capital_override](#!/macro/macro.shop.rule__capital_override)"
    assert fields["withdrawn rule"] == "[rule__exclude_tests](#!/macro/macro.shop.rule__exclude_tests)"
    # shown as it is: a '|' no cell of its own, '{{ x }}' no Jinja
    assert fields["gold answer"] == '`[{"city": "a\\|b {{ x }}", "value": 1.5}]`'
    assert fields["tolerance"] == "rel tol 0.001, abs tol 0.005"
    assert fields["support"] == "2 groups, the thinnest 40 rows and 31 distinct order_id; at least 30 rows and 10 " \
        "entities asked"
    rate = {**record["support"], "min_events": 10, "groups": [{"group": "a", "rows": 71, "entities": 66, "events": 3}]}
    assert _support(rate) == "1 group, the thinnest 71 rows, 3 events and 66 distinct " \
        "order_id; at least 30 rows, 10 entities and 10 events of the rate asked"
    # the question stays the description's first paragraph (the overview reads it there), the meta stays whole
    assert rule_task["description"].startswith(QUESTION + "\n\nMetric: ")
    assert rule_task["config"]["meta"]["dptool"]["task"]["metric"] == "avg_order_value"
    # a long gold is cut on the page
    long = properties([c], SHOP, records={c.task_id: {**record, "gold": list(range(400))}})["models"][0]
    assert "characters more in tasks.jsonl)" in _rendered_rows(long["description"])["gold answer"]


def test_properties_of_nothing():
    assert properties([], SHOP) == {"version": 2, "groups": [GROUP], "models": []}


def test_the_overview_lists_every_task_with_links_to_its_pages():
    overview = properties([point_query(), ranking()], SHOP, {"t_0001": QUESTION})["models"][-1]
    assert overview["name"] == OVERVIEW
    rows = overview["description"].split("\n")[-2:]
    assert rows == [
        "| [t_0001](#!/model/model.shop.t_0001) | " + QUESTION + " | [Average Order Value]"
        "(#!/model/model.shop.avg_order_value) | [Test Order Exclusion](#!/macro/macro.shop.rule__exclude_tests), "
        "[Capital District Override](#!/macro/macro.shop.rule__capital_override) |",
        "| [t_0002](#!/model/model.shop.t_0002) | ranking of Average Order Value | [Average Order Value]"
        "(#!/model/model.shop.avg_order_value) | — |"]
    assert overview_sql(overview_rows([point_query(), ranking()], SHOP)) == \
        (FIXTURES / "gold_overview.sql").read_text(encoding="utf-8")


def test_the_overview_is_one_row_per_task_and_refs_each_metric_only_while_dbt_parses():
    sql = overview_sql(overview_rows([point_query(), ranking(), trend()], SHOP))
    refs = []
    for execute in (False, True):
        rendered = DBT_JINJA.from_string(sql).render(
            config=lambda **_: "", var=VAR, execute=execute, ref=lambda name, at=execute: refs.append((at, name)))
        rows = duckdb.sql(rendered.split("\n", 1)[1]).fetchall()
        assert [r[0] for r in rows] == ["t_0001", "t_0002", "t_0003"]
    assert refs == [(False, "avg_order_value"), (False, "paid_rate")]
    assert rows[0] == ("t_0001", "point_query", "avg_order_value", "exclude_tests, capital_override")


def test_write_properties(tmp_path):
    (tmp_path / "dbt_project.yml").write_text("name: shop\n", encoding="utf-8")
    (tmp_path / GOLD_DIR).mkdir(parents=True)
    write_properties(DbtProject(tmp_path), [point_query(), ranking()], SHOP, {"t_0001": QUESTION})
    text = (tmp_path / GOLD_DIR / "_dptool_gold.yml").read_text(encoding="utf-8")
    assert text == (FIXTURES / "gold_properties.yml").read_text(encoding="utf-8")
    assert yaml.safe_load(text) == properties([point_query(), ranking()], SHOP, {"t_0001": QUESTION})


# --- the new analysis types -------------------------------------------------------------------------------------

PAID_AT = Skeleton("paid_rate", "model.shop.orders.ordered_at", "temporal", ("paid_definition",),
                   ("model.shop.orders",))


def trend(encoding: str = "timestamp") -> Candidate:
    return Candidate(PAID_AT, "trend_analysis", window_predicates("ordered_at", H2_2017, encoding, "duckdb"), [],
                     "series", None, None, {"window": window_slice(H2_2017)}, H2_2017, "t_0003",
                     period=period_expression("ordered_at", encoding, "duckdb"), encoding=encoding)


def counterfactual() -> Candidate:
    c = point_query()
    return replace(c, analysis_type="counterfactual", task_id="t_0004",
                   slice={**c.slice, "withdrawn_rule": "exclude_tests"}, gold_rules=("capital_override",),
                   base_rules=c.skeleton.rules)


def pair(analysis_type: str, task_id: str) -> Candidate:
    skeleton = Skeleton("avg_order_value", "model.shop.customers.state", "spatial", ("capital_override",), TABLES)
    where = [*in_window("ordered_at", H2_2017.start, H2_2017.end, "duckdb"), "state IN ('DF', 'SP')"]
    shape = "stats" if analysis_type == "significance_testing" else "grouped"
    return Candidate(skeleton, analysis_type, where, ["state"], shape, None, None,
                     {"window": window_slice(H2_2017), "groups": ["DF", "SP"]}, H2_2017, task_id)


class _Recorder:
    """Stands in for dbt's context: what dptool.gold receives once Jinja evaluated the call."""

    def __init__(self):
        self.calls = []

    def gold(self, **kwargs):
        self.calls.append(kwargs)
        return ""

    @staticmethod
    def date_trunc(part, column):
        return f"date_trunc('{part}', {column})"


def rendered_gold_call(sql: str) -> dict:
    dptool, dbt = _Recorder(), _Recorder()
    DBT_JINJA.from_string(sql).render(config=lambda **_: "", var=VAR, dptool=dptool, dbt=dbt, execute=True)
    (call,) = dptool.calls
    return call


def test_model_sql_trend():
    assert model_sql(trend()) == (FIXTURES / "gold_model_t_0003.sql").read_text(encoding="utf-8")
    # the period is Jinja code: dbt's cross-database date_trunc of the quoted column
    assert rendered_gold_call(model_sql(trend())) == {
        "metric": "paid_rate", "rules": ["paid_definition"], "where": trend().where, "shape": "series",
        "period": "date_trunc('month', ordered_at)"}


def test_model_sql_trend_of_yymmdd():
    c = trend("yymmdd")
    assert model_sql(c).splitlines()[2] == (
        '{{ dptool.gold(metric="paid_rate", rules=["paid_definition"], where=["ordered_at >= 170701", '
        '"ordered_at <= 171231"], shape="series", period="FLOOR(ordered_at / 100)") }}')
    assert gold_call_arguments(model_sql(c)) == {
        "metric": "paid_rate", "rules": ["paid_definition"], "where": ["ordered_at >= 170701", "ordered_at <= 171231"],
        "shape": "series", "period": "FLOOR(ordered_at / 100)"}


def test_model_sql_counterfactual():
    c = counterfactual()
    assert model_sql(c) == (FIXTURES / "gold_model_t_0004.sql").read_text(encoding="utf-8")
    # gold: every rule but the withdrawn one; base: every rule
    arguments = gold_call_arguments(model_sql(c))
    assert arguments["rules"] == ["capital_override"]
    assert arguments["base_rules"] == ["exclude_tests", "capital_override"]


def test_model_sql_counterfactual_of_its_only_rule():
    c = replace(counterfactual(), gold_rules=(), base_rules=("exclude_tests",))
    arguments = gold_call_arguments(model_sql(c))
    assert (arguments["rules"], arguments["base_rules"]) == ([], ["exclude_tests"])


@pytest.mark.parametrize(("analysis_type", "shape"), [("comparison", "grouped"), ("significance_testing", "stats")])
def test_model_sql_pairs(analysis_type, shape):
    c = pair(analysis_type, "t_0005")
    assert gold_call_arguments(model_sql(c)) == {
        "metric": "avg_order_value", "rules": ["capital_override"], "where": c.where, "group_by": ["state"],
        "shape": shape}
    assert "period=" not in model_sql(c) and "base_rules=" not in model_sql(c)


def test_properties_of_the_new_types():
    only_rule = replace(counterfactual(), task_id="t_0006", gold_rules=(), base_rules=("exclude_tests",),
                        skeleton=replace(point_query().skeleton, rules=("exclude_tests",)))
    plain_trend = replace(trend(), skeleton=replace(PAID_AT, rules=()))
    models = properties([trend(), counterfactual(), pair("comparison", "t_0005"), only_rule, plain_trend],
                        SHOP)["models"]
    test = [{"dptool.rule_changes_answer": {"arguments": {"variants": ["gold"]}}}]
    # the rule test wherever a rule is applied: a counterfactual without gold rules still has its base's
    assert [(m["name"], m.get("data_tests")) for m in models] == [
        ("t_0003", test), ("t_0004", test), ("t_0005", test), ("t_0006", test), ("t_0003", None), (OVERVIEW, None)]
    # the task meta keeps the skeleton's rules and the withdrawn one in the slice
    assert models[1]["config"]["meta"]["dptool"]["task"] == {
        "analysis_type": "counterfactual", "metric": "avg_order_value", "rules": ["exclude_tests", "capital_override"],
        "dimension": "city",
        "slice": {"window": window_slice(Q3_2017), "city": "Sant'Ana", "withdrawn_rule": "exclude_tests"}}
    assert models[0]["description"] == "\n".join([
        "trend analysis of Paid Rate", "",
        "Metric: Paid Rate — COUNT(paid orders) / COUNT(orders) ([paid_rate](#!/model/model.shop.paid_rate))", "",
        "### Rule: Paid Order Definition", "",
        "Macro: [rule__paid_definition](#!/macro/macro.shop.rule__paid_definition)",
        "", '{{ doc("rule__paid_definition") }}'])
    assert models[2]["config"]["meta"]["dptool"]["task"]["slice"]["groups"] == ["DF", "SP"]


# --- materialize: one dbt compile, the SQL run on the target, nothing built ------------------------------------

DEMO_SKELETON = Skeleton("avg_delivery_days", "model.dptool_demo.orders.customer_state", "spatial",
                         ("outlier_exclusion",), ("model.dptool_demo.orders",))


def demo_candidate(task_id: str, rules=("outlier_exclusion",), where=(), shape="value", group_by=()) -> Candidate:
    return Candidate(replace(DEMO_SKELETON, rules=tuple(rules)), "point_query", list(where), list(group_by), shape,
                     None, task_id=task_id)


def test_materialize_runs_each_gold_query_and_says_why_one_is_dropped(demo_project, demo_catalog):
    candidates = [
        demo_candidate("t_0001", group_by=["customer_state"], shape="grouped"),  # the rule changes the answer
        demo_candidate("t_0002", rules=["not_a_rule"]),  # does not compile
        demo_candidate("t_0003", where=["no_such_column = 1"]),  # its query fails
        demo_candidate("t_0004", where=["delivery_days <= 10"]),  # the rule changes nothing here
        demo_candidate("t_0005", rules=()),  # no rule to check
    ]
    done = []
    outcomes = list(materialize(demo_project, candidates, demo_catalog, demo_project.connection(), on_done=done.append))
    assert [c.task_id for c, _ in outcomes] == [c.task_id for c in candidates]
    reasons = {c.task_id: o for c, o in outcomes if isinstance(o, str)}
    assert set(reasons) == {"t_0002", "t_0003", "t_0004"}
    assert reasons["t_0002"].startswith("model error: Compilation Error in model t_0002 ")
    assert reasons["t_0003"].startswith("model error: ") and "no_such_column" in reasons["t_0003"]
    assert reasons["t_0004"] == "the rule does not change the answer"
    built = {c.task_id: o for c, o in outcomes if not isinstance(o, str)}
    assert sum(done) == len(candidates) + len(candidates) - 1  # compiled, then run (all but the one that failed)
    b = built["t_0001"]
    assert b.unique_id == "model.dptool_demo.t_0001" and b.columns == ["variant", "customer_state", "value"]
    assert rows_differ(b.columns, b.rows)
    with Warehouse.of(demo_project.connection()) as wh:  # the rows are those of the SQL dbt wrote
        assert sorted(wh.query(b.compiled_sql)[1]) == sorted(b.rows)
    # the stored SQL of each variant, from the shared CTEs parsed once, is the text variant_query gives
    mapping = {("dptool_demo", "ecommerce", "orders"): ("ecommerce", "orders")}
    writer = VariantWriter("duckdb", mapping, "duckdb")
    for task_id in ("t_0001", "t_0005"):
        b = built[task_id]
        written = {n: q.sql for n, q in writer.queries(b.injected, b.own_sql, ["dptool_gold", "dptool_base"],
                                                        ["customer_state"]).items()}
        for name in ("dptool_gold", "dptool_base"):
            assert written[name] == pretty(rename_relations(
                variant_query(b.compiled_sql, name, ["customer_state"], "duckdb"), mapping), "duckdb")
        # the same texts as SharedQuery: the ephemeral models dbt injected lead, each with its body as written
        queries = writer.queries(b.injected, b.own_sql, ["dptool_gold", "dptool_base"], ["customer_state"])
        for name, query in queries.items():
            assert query.sql == written[name]
            assert query.ctes and {n for n, _ in query.ctes} <= {n for n, _ in b.injected}
            assert all(f"{n} AS (\n{body}\n)" in written[name] for n, body in query.ctes)
    assert not (demo_project.project_dir / "models" / "dptool_batch").exists()


def test_write_models_replaces_the_folder_with_the_kept_models_and_their_tests(tmp_path):
    (tmp_path / "dbt_project.yml").write_text("name: shop\n", encoding="utf-8")
    folder = tmp_path / GOLD_DIR
    folder.mkdir(parents=True)
    (folder / "t_0009.sql").write_text("-- an earlier run's\n", encoding="utf-8")
    write_models(DbtProject(tmp_path), [point_query(), ranking()], SHOP, {"t_0001": QUESTION})
    assert sorted(p.name for p in folder.iterdir()) == ["_dptool_gold.yml", "dptool_tasks.sql", "t_0001.sql",
                                                        "t_0002.sql"]
    assert (folder / "t_0002.sql").read_text(encoding="utf-8") == model_sql(ranking())
    assert (folder / "_dptool_gold.yml").read_text(encoding="utf-8") == \
        (FIXTURES / "gold_properties.yml").read_text(encoding="utf-8")


def test_rows_differ_is_the_rule_test_on_rows_read_back():
    columns = ["variant", "state", "value"]
    same = [("base", "SP", 1.0), ("base", "RJ", 2.0), ("gold", "RJ", 2.0 + 1e-12), ("gold", "SP", Decimal("1.0"))]
    assert not rows_differ(columns, same)  # order and float noise are not a change
    assert rows_differ(columns, [("base", "SP", 1.0), ("gold", "SP", 1.001)])
    assert rows_differ(columns, [("base", "SP", 1.0), ("base", "RJ", 2.0), ("gold", "SP", 1.0)])  # a group left
    assert rows_differ(columns, [("base", "SP", 1.0), ("gold", "SP", None)])  # suppressed
    assert rows_differ(columns, [("base", "SP", 1.0), ("gold", "SP", 1.0), ("gold", "SP", 1.0)])  # a multiset


def test_float_noise_of_a_large_sum_is_no_change():
    # DuckDB sums doubles in thread order: a sum in the millions can move in its 9th decimal between runs
    columns = ["variant", "month", "value"]
    noisy = [("base", 1, 3456789.123456789), ("gold", 1, 3456789.123456789 + 3e-9)]
    assert round(noisy[0][2], 9) != round(noisy[1][2], 9)  # the rounding alone would call it a change
    assert not rows_differ(columns, noisy)
    assert rows_differ(columns, [("base", 1, 3456789.1234), ("gold", 1, 3456789.1284)])  # a real change
    assert rows_differ(columns, [("base", 1, 0.5), ("gold", 1, 0.5 + 2e-9)])  # small values: 1e-9 absolute
    assert same_rows([(1, "SP", None)], [(1, "SP", None)]) and not same_rows([(1, "SP", None)], [(1, "SP", 0.0)])


def test_the_overview_of_thousands_of_tasks():
    many = [replace(ranking(), task_id=f"t_{i:04d}") for i in range(1, 3001)]
    sql = overview_sql(many)  # a union this long is no nested tree: it prints
    assert sql.count("UNION ALL") == 2999 and sql.rstrip().endswith("'' AS rules{% endraw %}")
