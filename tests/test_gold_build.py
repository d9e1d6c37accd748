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

