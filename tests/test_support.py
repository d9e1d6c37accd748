"""Minimum support (issue 26): no task of the demo bundle rests on fewer rows or entities than the minimum, and the
check that keeps it so fails on a task that does."""

from __future__ import annotations

import copy
import json

import pytest

from dptool.errors import DptoolError
from dptool.generate.instantiate import Candidate
from dptool.generate.minimum import Setting, noun, read_setting
from dptool.generate.sample import Skeleton
from dptool.generate.support import MIN_ENTITIES, MIN_ROWS, record, thin
from dptool.generate.validate import CHECKS, identifiers, issues


def _tasks(bundle) -> list[dict]:
    return [json.loads(line) for line in (bundle / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]


def _group_values(task: dict) -> list:
    """The groups the gold lists, as its support records them."""
    gold, key = task["gold"], (task["answer_format"] or {}).get("key")
    if task["analysis_type"] in ("ranking", "decomposition"):
        return [g[key] for g in gold]
    if task["analysis_type"] in ("comparison", "significance_testing"):
        return [gold["group_a"], gold["group_b"]]
    return [None]


def test_no_task_rests_on_fewer_than_the_minimum(demo_bundle):
    bundle, _ = demo_bundle
    sql = [t for t in _tasks(bundle) if t["gold_sql"]]
    assert sql
    for task in sql:
        support = task["support"]
        assert (support["min_rows"], support["min_entities"]) == (MIN_ROWS, MIN_ENTITIES), task["task_id"]
        assert support["groups"], task["task_id"]
        for group in support["groups"]:
            assert group["rows"] >= MIN_ROWS and group["entities"] >= MIN_ENTITIES, (task["task_id"], group)
        if task["analysis_type"] != "trend_analysis":
            # the support counts the very groups the gold answers with
            assert sorted(map(str, _group_values(task))) == sorted(str(g["group"]) for g in support["groups"]), \
                task["task_id"]
        else:
            assert len(support["groups"]) >= 3


def test_support_counts_what_a_count_metric_counts(demo_bundle):
    """Where the metric is a row count (count(*) over its rows), the gold of each group is its support's rows: the
    support query reads the rows the gold does, rules and slice applied."""
    bundle, _ = demo_bundle
    counts = {"transaction_count", "new_accounts", "cards_issued"}
    checked = 0
    for task in _tasks(bundle):
        if task["metric_ids"][0] not in counts or task["analysis_type"] not in ("point_query", "decomposition",
                                                                               "counterfactual", "ranking"):
            continue
        gold = task["gold"] if isinstance(task["gold"], list) else [{"value": task["gold"]["value"]}]
        key = (task["answer_format"] or {}).get("key")
        by_group = {str(g["group"]): g["rows"] for g in task["support"]["groups"]}
        for g in gold:
            assert by_group[str(g.get(key))] == g["value"], task["task_id"]
            checked += 1
    assert checked, "the demo bundle has a task on a count metric"


def test_card_and_kb_state_the_minimum(demo_bundle):
    bundle, _ = demo_bundle
    card = (bundle / "card.md").read_text(encoding="utf-8")
    assert "## Minimum support" in card and "| thin_support |" in card
    assert f"at least {MIN_ROWS} rows and {MIN_ENTITIES} distinct entities" in card
    assert "Tasks dropped as resting on fewer (thin_support): " in card
    for domain, column in (("banking", "account_id"), ("ecommerce", "order_id")):
        kb = (bundle / "kb" / domain / "metrics.md").read_text(encoding="utf-8")
        assert "- **Minimum support.**" in kb and f"`{column}`" in kb, domain
    assert "thin_support" in CHECKS and "removed_group_asked" in CHECKS


def test_thin_support_fails_a_thin_task(demo_bundle, demo_catalog):
    bundle, _ = demo_bundle
    task = next(t for t in _tasks(bundle) if t["gold_sql"])
    banned = identifiers(demo_catalog)
    assert "thin_support" not in issues(task, demo_catalog, banned)
    for field, value in (("rows", MIN_ROWS - 1), ("entities", 1)):
        thin_task = copy.deepcopy(task)
        thin_task["support"]["groups"][0][field] = value
        assert "thin_support" in issues(thin_task, demo_catalog, banned), field


def _candidate(analysis_type: str, min_rows=None) -> Candidate:
    skeleton = Skeleton(metric="m", dimension="t.region", dimension_kind="spatial", rules=("r",), tables=("t",))
    shape = {"decomposition": "grouped", "ranking": "ranking"}.get(analysis_type, "value")
    return Candidate(skeleton, analysis_type, [], ["region"], shape, None, min_rows)


SUPPORT_COLUMNS = ["region", "support_input", "support_entity", "support_min_rows", "support_min_entities",
                   "support_rows", "support_entities", "value"]


def test_record_from_support_rows():
    """Support rows as dptool.support returns them: each answer group's rows and entities, the groups a rule's
    having removes, and the minimum the query read."""
    rows = [("north", "m", "account_id", 30, 10, 400, 40, 1), ("south", "m", "account_id", 30, 10, 35, 3, 1),
            ("west", "m", "account_id", 30, 10, 60, 8, 0), ("east", "m", "account_id", 30, 10, 5, 2, 0)]
    gold = [("base", "north", 1.0), ("base", "south", 2.0), ("base", "west", 3.0), ("base", "east", 4.0),
            ("gold", "north", 1.5), ("gold", "south", 2.5)]
    columns = ["variant", "region", "value"]
    found = record(_candidate("decomposition"), columns, gold, SUPPORT_COLUMNS, rows)
    assert found["groups"] == [{"group": "north", "rows": 400, "entities": 40},
                               {"group": "south", "rows": 35, "entities": 3}]
    assert found["removed"] == ["east", "west"] and found["entity"] == ["account_id"]
    assert thin(found) == ["south"]
    # a breakdown of groups of at least 30 rows never asked for east (5 rows): only west is a removed group
    assert record(_candidate("decomposition", 30), columns, gold, SUPPORT_COLUMNS, rows)["removed"] == ["west"]
    # a point query lists no groups: nothing it asks for is removed
    assert record(_candidate("point_query"), ["variant", "value"], [("gold", 1.0), ("base", 2.0)],
                  SUPPORT_COLUMNS[1:], [r[1:] for r in rows[:1]])["removed"] == []


def _project(tmp_path, vars_text: str):
    (tmp_path / "dbt_project.yml").write_text(f"name: shop\nversion: '1'\nprofile: shop\n{vars_text}",
                                              encoding="utf-8")
    return tmp_path


def test_the_setting_as_dbt_project_yml_sets_it(tmp_path):
    """Every key of dptool_min_support, global or scoped to the project; the defaults without it; the card's
    sentence writes `entity` when it is set."""
    assert read_setting(_project(tmp_path, "")) == Setting(MIN_ROWS, MIN_ENTITIES)
    got = read_setting(_project(tmp_path, "vars:\n  dptool_min_support: {rows: 10, entities: 5, entity: sale_id}\n"))
    assert (got.rows, got.entities, got.chosen) == (10, 5, ("sale_id",))
    assert "{rows: 10, entities: 5, events: 10, entity: sale_id}" in got.sentence()
    scoped = read_setting(_project(tmp_path, "vars:\n  dptool_min_support: {rows: 99}\n"
                                             "  shop:\n    dptool_min_support: {rows: 12}\n"))
    assert (scoped.rows, scoped.entities, scoped.chosen) == (12, MIN_ENTITIES, ())
    assert "entity" not in scoped.var_text()


@pytest.mark.parametrize(("value", "key"), [("{rows: 0}", "rows"), ("{entities: many}", "entities"),
                                            ("{entity: [1]}", "entity"), ("{rowz: 3}", "rowz"), ("30", "")])
def test_a_malformed_setting_is_one_line_naming_its_key(tmp_path, value, key):
    with pytest.raises(DptoolError) as caught:
        read_setting(_project(tmp_path, f"vars:\n  dptool_min_support: {value}\n"))
    message = str(caught.value)
    assert "\n" not in message and "dbt_project.yml: vars.dptool_min_support" + (f".{key}" if key else "") in message


def test_entity_nouns():
    assert [noun(c) for c in ("sale_id", "order", "company", "address", "day", "id_customer")] == [
        "sales", "orders", "companies", "addresses", "days", "customers"]
