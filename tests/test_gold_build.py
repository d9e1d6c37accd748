"""Generate builds no table: after it, the user's `dbt build --select tag:dptool_gold` materializes every gold model,
passes every rule test, and gives exactly the rows generate read, row for row, task by task — for every bundle
generated from the project, not only the last one."""

from __future__ import annotations

import math
import shutil

import pytest

from dptool.generate.pipeline import generate
from dptool.project.dbt import DbtProject
from dptool.project.warehouse import Warehouse


@pytest.fixture(scope="module")
def generated(demo_project, tmp_path_factory):
    """`dptool generate` on a copy of the built demo project, in this process (the rows it read are kept)."""
    dest = tmp_path_factory.mktemp("gold_build") / "project"
    shutil.copytree(demo_project.project_dir, dest, symlinks=True,
                    ignore=shutil.ignore_patterns("logs", "dptool_gold", "dptool_ablation", "__pycache__"))
    project = DbtProject(dest)
    # a small benchmark: every gold model it keeps is compared row for row, and dbt build runs each of them
    result = generate(dest, dest.parent / "bundle", echo=lambda _: None, progress=False, target_tasks=40,
                      min_per_type=2)
    # a second, smaller bundle into another folder: the first bundle's dbt_nodes must still compute its golds
    # (issue 24: the second run once rewrote models/dptool_gold/, and t_0200 then named another computation)
    second = generate(dest, dest.parent / "second", echo=lambda _: None, progress=False, target_tasks=15,
                      min_per_type=1)
    return project, result, second


def test_generate_builds_nothing(generated):
    project, result, _ = generated
    with Warehouse.of(project.connection()) as wh:
        _, rows = wh.query("select table_name from information_schema.tables where table_schema like '%dptool_gold%'")
    assert rows == []
    assert result.rows and set(result.rows) == {t["task_id"] for t in result.tasks if t["gold_sql"]}


def test_dbt_build_passes_every_rule_test_and_gives_the_rows_generate_read(generated):
    project, result, second = generated
    assert set(result.rows) - set(second.rows)  # tasks the second bundle does not ask keep their gold models
    assert set(second.rows) & set(result.rows)  # and the questions both ask share theirs
    results = project.run("build", "--selector", "dptool_gold", gold=True)  # what the README tells a user to run
    assert [(r.unique_id, r.message) for r in results if r.status not in ("success", "pass")] == []
    tested = {r.attached_node.rsplit(".", 1)[-1] for r in results if r.resource_type == "test"}
    assert tested == {t["task_id"] for t in result.tasks + second.tasks if t["rule_ids"] and t["gold_sql"]}
    models = {r.name: r.relation_name for r in results if r.resource_type == "model"}
    assert set(models) == set(result.rows) | set(second.rows) | {"dptool_tasks"}
    with Warehouse.of(project.connection()) as wh:
        for bundle in (result, second):
            for task_id, (columns, rows) in sorted(bundle.rows.items()):
                assert {t["dbt_node"] for t in bundle.tasks if t["task_id"] == task_id} == \
                    {f"model.dptool_demo.{task_id}"}
                built_columns, built_rows = wh.query(f"select * from {models[task_id]}")
                assert built_columns == columns, task_id
                assert _multiset(built_rows) == _multiset(rows), task_id


def _multiset(rows: list[tuple]) -> list:
    """Rows in a total order, numbers rounded to 6 significant digits for the order and kept for the comparison.

    DuckDB sums doubles in thread order: a sum in the millions can differ in its 9th decimal from one run
    to the next, so numbers are compared within 1e-9 of their size, never by their exact bits.
    """
    def order(row):
        return tuple((v is None, f"{v:.6g}" if isinstance(v, int | float) and not isinstance(v, bool) else str(v))
                     for v in row)

    return [_Close(row) for row in sorted(rows, key=order)]


class _Close(tuple):
    def __eq__(self, other):
        if len(self) != len(other):
            return False
        for a, b in zip(self, other, strict=True):
            if isinstance(a, float) or isinstance(b, float):
                if a is None or b is None or not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9):
                    return False
            elif a != b:
                return False
        return True

    __hash__ = tuple.__hash__



# ---- held-out round four (issue 23's "done when"): rules that try to take the question's slice away -----------------

HOSTILE_RULES = """
{% macro rule__hostile_or(metric, q) %}{% do q.where.append("1 = 1 or 1 = 1") %}{{ return(q) }}{% endmacro %}
{% macro rule__hostile_changed(metric, q) %}
  {% do q.update({'where': (q.where | reject('equalto', "date >= 930101") | list) + ["date >= 900101"]}) %}
  {{ return(q) }}
{% endmacro %}
{% macro rule__hostile_new_mapping(metric, q) %}
  {% set fresh = {} %}{% for k, v in q.items() if k != 'where' %}{% do fresh.update({k: v}) %}{% endfor %}
  {{ return(fresh) }}
{% endmacro %}
{% macro rule__hostile_pop(metric, q) %}{% do q.where.pop(0) %}{{ return(q) }}{% endmacro %}
{% macro rule__hostile_clear(metric, q) %}{% do q.where.clear() %}{{ return(q) }}{% endmacro %}
{% macro rule__hostile_columns(metric, q) %}{% do q.columns.update({'date': '930301'}) %}{{ return(q) }}{% endmacro %}
{% macro rule__hostile_expression(metric, q) %}
  {% do q.columns.update({'date': 'date + 0'}) %}{{ return(q) }}
{% endmacro %}
"""
SLICE = "where=['date >= 930101', 'date <= 930630']"


@pytest.fixture(scope="module")
def hostile(built_demo_copy):
    """The built demo with rule macros that try to drop the slice, and a gold model of each."""
    root = built_demo_copy.project_dir
    (root / "macros" / "rule__hostile.sql").write_text(HOSTILE_RULES, encoding="utf-8")
    folder = root / "models" / "hostile"
    folder.mkdir(exist_ok=True)
    for rule in ("or", "changed", "new_mapping", "pop", "clear", "columns", "expression"):
        (folder / f"h_{rule}.sql").write_text(f"{{{{ dptool.gold('avg_client_age', rules=['hostile_{rule}'], "
                                              f"{SLICE}) }}}}\n", encoding="utf-8")
    yield built_demo_copy
    shutil.rmtree(folder)
    (root / "macros" / "rule__hostile.sql").unlink()
    built_demo_copy.run("parse")  # the copy is shared: its manifest must not name the files just removed


def _compiled(project: DbtProject, model: str) -> str:
    from dptool.errors import DptoolError

    try:
        project.run("compile", "--select", model)
    except DptoolError as exc:
        return f"error: {exc}"
    return next(project.target_dir.joinpath("compiled").rglob(f"{model}.sql")).read_text(encoding="utf-8")


@pytest.mark.parametrize("rule", ["changed", "new_mapping", "pop", "clear"])
def test_round_four_a_rule_that_removes_the_slice_fails_the_model(hostile, rule):
    out = _compiled(hostile, f"h_{rule}")
    assert out.startswith("error:") and f"rule macro 'rule__hostile_{rule}' removed where `date >= 930101`" in out, \
        out[:300]


def _gold_and_base(project: DbtProject, sql: str) -> dict:
    with Warehouse.of(project.connection()) as wh:
        _, rows = wh.query(sql)
    return dict(rows)


def test_round_four_a_rule_predicate_with_or_cannot_widen_the_slice(hostile):
    sql = _compiled(hostile, "h_or")
    assert "(1 = 1 or 1 = 1)" in sql and "(date >= 930101) and (date <= 930630)" in sql
    values = _gold_and_base(hostile, sql)
    assert math.isclose(values["gold"], values["base"])  # the rule changes nothing: both are the slice's value


def test_round_four_a_rule_that_sets_the_slice_column_to_a_constant_fails_the_model(hostile):
    # the slice filters the column as the rules redefine it: set to a constant, it would hold every row or none
    out = _compiled(hostile, "h_columns")
    assert out.startswith("error:") and "rule macro 'rule__hostile_columns' sets column 'date'" in out \
        and "`date >= 930101`" in out, out[:300]


def test_round_four_a_rule_that_redefines_the_slice_column_by_an_expression_keeps_the_slice(hostile):
    # a reclassification (an expression that reads columns) is what a slice on that column is meant to see
    sql = _compiled(hostile, "h_expression")
    assert not sql.startswith("error:"), sql[:300]
    values = _gold_and_base(hostile, sql)
    assert values["gold"] is not None and math.isclose(values["gold"], values["base"]), values  # date + 0 is date
