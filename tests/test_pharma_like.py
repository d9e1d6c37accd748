"""No silent zero, end to end on a project shaped like a real one that made none: tests/fixtures/pharma_like.

One semantic model whose primary entity is the sale (`sale_id`), a `brand_id` of 5 values, 7 simple sum metrics and
20 sales a month over 2024. The minimum support counts the declared entity, not the `_id` column of 5 brands, so the
defaults make tasks; trends appear once `dptool_min_support` is lowered as the README says; a setting under which
no task can be made fails with each metric's cause and the setting that changes it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dptool.project.dbt import DbtProject
from tests.subscriptions import IGNORED, cli, set_up

FIXTURE = Path(__file__).parent / "fixtures" / "pharma_like"
LOWERED = "\nvars:\n  dptool_min_support: {rows: 10, entities: 5}\n"  # as the README's "Minimum support" writes it


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pharma") / "project"
    shutil.copytree(FIXTURE, root, ignore=IGNORED)
    set_up(root)
    return root


def _generate(root: Path, out: str, min_support: str | None = None):
    text = (FIXTURE / "dbt_project.yml").read_text(encoding="utf-8") + (min_support or "")
    (root / "dbt_project.yml").write_text(text, encoding="utf-8")
    DbtProject(root).run("parse")  # dbt_project.yml changed: the manifest must follow it
    return cli("generate", "--project-dir", str(root), "--out", str(root / out))


def _tasks(bundle: Path) -> list[dict]:
    return [json.loads(line) for line in (bundle / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]


def test_the_seed_is_as_its_script_writes_it(tmp_path):
    import runpy

    runpy.run_path(str(FIXTURE / "scripts" / "make_seeds.py"), run_name="seeds")["main"](tmp_path)
    assert (tmp_path / "raw_sales.csv").read_bytes() == (FIXTURE / "seeds" / "raw_sales.csv").read_bytes()


def test_the_defaults_count_the_declared_entity_and_make_tasks(project):
    proc = _generate(project, "bundle")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the terminal names the entity counted, and why that one
    assert "entities counted: sales (`sale_id`, the metric's declared entity)" in proc.stdout
    tasks = _tasks(project / "bundle")
    assert len(tasks) >= 30
    assert {e for t in tasks for e in t["support"]["entity"]} == {"sale_id"}
    # 20 rows a month: no trend at the default minimum, and the terminal and card.md say why
    assert not [t for t in tasks if t["analysis_type"] == "trend_analysis"]
    why = "warning: no trend_analysis task: fewer than 45 rows a month (the busiest month holds"
    assert why in proc.stdout
    card = (project / "bundle" / "card.md").read_text(encoding="utf-8")
    assert why.removeprefix("warning: ") in card
    assert "no significance_testing task: no metric is an average of one measure" in proc.stdout + card
    # row nouns a person says: the primary entity, not the semantic model's name
    grouped = [t["question"] for t in tasks if t["analysis_type"] in ("ranking", "decomposition")]
    assert grouped and all("at least 30 sales" in q for q in grouped), grouped[:2]
    assert not [t for t in tasks if "brand revenues" in t["question"]]
    # four names of one thing in the data (5 brands, each its own class and sub-class): asked once, by one of them
    assert "note: brand_id, sub_class, therapeutic_class are one-to-one with brand_name in the data" in proc.stdout
    dimensions = {t["dimension"] for t in tasks}
    assert "brand_name" in dimensions and not dimensions & {"brand_id", "sub_class", "therapeutic_class"}
    # a unit a person says, not "— (number)"
    metrics_md = next((project / "bundle" / "kb").glob("*/metrics.md")).read_text(encoding="utf-8")
    assert "- Unit: a plain number (no unit declared)" in metrics_md and "— (number)" not in metrics_md


def test_a_lowered_minimum_gives_trends_and_says_its_number(project):
    proc = _generate(project, "lowered", LOWERED)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tasks = _tasks(project / "lowered")
    trends = [t for t in tasks if t["analysis_type"] == "trend_analysis"]
    assert trends
    assert {(t["support"]["min_rows"], t["support"]["min_entities"]) for t in tasks} == {(10, 5)}
    grouped = [t["question"] for t in tasks if t["analysis_type"] in ("ranking", "decomposition")]
    assert grouped and all("at least 10 sales" in q and "at least 30" not in q for q in grouped), grouped[:2]
    card = (project / "lowered" / "card.md").read_text(encoding="utf-8")
    assert "dbt var `dptool_min_support`: {rows: 10, entities: 5, events: 10})" in card


def test_no_task_fails_naming_each_metric_and_the_setting(project):
    """Counting the 5 brands as the entities (the var's `entity`), no group can rest on 10 of them."""
    proc = _generate(project, "none", "\nvars:\n  dptool_min_support: {entity: brand_id}\n")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    (error,) = proc.stderr.strip().splitlines()
    assert error.startswith("error: no task made, no bundle written") and "dptool_min_support" in error
    for metric in ("units", "gross_sales", "chargebacks", "rebates", "discounts", "returns", "fees"):
        (line,) = [x for x in proc.stdout.splitlines() if x.startswith(f"warning: metric {metric}: no task")]
        assert line.endswith("; to keep those of thin_support: lower `rows`, `entities` or `events`, or set `entity`, "
                             "of the dbt var dptool_min_support {rows: 30, entities: 10, events: 10, entity: brand_id} "
                             "in the vars of dbt_project.yml")
    assert not (project / "none").exists()
