"""Support counted on what the answer rests on: the rows the metric's value reads after its own filter, a rate's
numerator events, the entity a per-entity ratio divides by. On the support_shop fixture (real dbt and DuckDB)."""

from __future__ import annotations

import pytest

from dptool.errors import DptoolError
from dptool.generate.instantiate import Candidate
from dptool.generate.minimum import MIN_EVENTS, Setting, read_setting
from dptool.generate.rests_on import counted, rests_on
from dptool.generate.sample import Skeleton
from dptool.generate.support import record, thin
from dptool.generate.validate import identifiers, issues
from tests.support_shop import candidate, set_up, support_of


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    return set_up(tmp_path_factory.mktemp("support_shop") / "project")


def _task(catalog, support: dict, question: str, analysis_type="point_query") -> dict:
    return {"task_id": "t_1", "analysis_type": analysis_type, "question": question, "gold": {"value": 0.1},
            "answer_format": {"type": "value"}, "support": support, "metric_ids": ["late_delivery_rate"]}


def test_a_filtered_metric_counts_only_the_rows_its_value_reads(shop):
    """Late Delivery Rate reads delivered orders only (its CASE WHEN ... END is NULL for the others): east rests on
    its 12 delivered orders, not its 40 orders, and is thin; north's 30 delivered orders hold 3 late ones."""
    project, catalog = shop
    found = support_of(project, catalog, [candidate("late_delivery_rate", "decomposition", "region", "t_late")])
    record = found["t_late"]
    assert record["groups"] == [{"group": "east", "rows": 12, "entities": 12, "events": 11},
                                {"group": "north", "rows": 30, "entities": 30, "events": 3},
                                {"group": "south", "rows": 35, "entities": 35, "events": 12}]
    assert record["min_events"] == MIN_EVENTS and record["entity"] == ["order_id"]
    assert thin(record) == ["east", "north"]


def test_a_rate_on_3_events_is_refused(shop):
    """North's late rate rests on 30 delivered orders (the minimum) but 3 late ones: thin; south's 12 are not."""
    project, catalog = shop
    north = candidate("late_delivery_rate", "point_query", "region", "t_north", ["region = 'north'"], "value")
    south = candidate("late_delivery_rate", "point_query", "region", "t_south", ["region = 'south'"], "value")
    north.group_by.clear()
    south.group_by.clear()
    found = support_of(project, catalog, [north, south])
    assert found["t_north"]["groups"] == [{"group": None, "rows": 30, "entities": 30, "events": 3}]
    banned = identifiers(catalog)
    question = "What was our Late Delivery Rate for orders shipped to the {} region?"
    assert "thin_support" in issues(_task(catalog, found["t_north"], question.format("north")), catalog, banned)
    assert "thin_support" not in issues(_task(catalog, found["t_south"], question.format("south")), catalog, banned)


def test_a_per_seller_metric_on_2_sellers_is_refused(shop):
    """GMV per Active Seller rests on the sellers of its denominator: south's 40 orders come from 2 sellers."""
    project, catalog = shop
    found = support_of(project, catalog, [candidate("gmv_per_active_seller", "decomposition", "region", "t_gmv")])
    record = found["t_gmv"]
    by_group = {g["group"]: (g["rows"], g["entities"]) for g in record["groups"]}
    assert by_group == {"east": (40, 12), "north": (40, 12), "south": (40, 2)}
    assert "events" not in record["groups"][0] and record["entity"] == ["order_id", "seller_id"]
    assert thin(record) == ["south"]


@pytest.mark.parametrize(("value", "rate", "rows", "events"), [
    ("avg(case when status = 'B' then 1.0 when status = 'A' then 0.0 end)", True,
     "(case when status = 'B' then 1.0 when status = 'A' then 0.0 end) is not null",
     "(case when status = 'B' then 1.0 when status = 'A' then 0.0 end) <> 0"),
    ("count(*)", False, None, None),
    ("sum(case when type = 'gold' then 1.0 else 0.0 end) / sum(case when type in ('classic', 'gold') then 1.0 "
     "else 0.0 end)", True, "(case when type in ('classic', 'gold') then 1.0 else 0.0 end) <> 0",
     "(case when type = 'gold' then 1.0 else 0.0 end) <> 0"),
    ("sum(price + freight_value) / count(distinct order_id)", False, "(order_id) is not null", None),
    ("avg(1.0 - on_time_flag)", True, "(1.0 - on_time_flag) is not null", "(1.0 - on_time_flag) <> 0"),
    ("count(distinct active_seller_id)", False, "(active_seller_id) is not null", None),
    ("avg(amount)", False, "(amount) is not null", None),
])
def test_what_a_value_rests_on(value, rate, rows, events):
    assert rests_on(value, rate) == {"rows": rows, "events": events}


def test_a_composites_leaves_carry_their_own_entity(shop):
    _, catalog = shop
    reads = counted(catalog, ["gmv_per_active_seller"])
    assert reads == {"active_sellers": {"rows": "(seller_id) is not null", "events": None, "entity": "seller_id"},
                     "gmv": {"rows": "(amount) is not null", "events": None, "entity": "order_id"}}


def test_the_setting_states_what_is_counted(tmp_path):
    (tmp_path / "dbt_project.yml").write_text("name: shop\nvars:\n  dptool_min_support: {events: 5}\n",
                                              encoding="utf-8")
    setting = read_setting(tmp_path)
    assert setting.events == 5 and setting.var_text() == "{rows: 30, entities: 10, events: 5}"
    sentence = Setting(events=5).sentence()
    assert "a rate on at least 5 events of its numerator" in sentence
    assert "the rows counted are those the metric's value reads" in sentence
    (tmp_path / "dbt_project.yml").write_text("name: shop\nvars:\n  dptool_min_support: {events: 0}\n",
                                              encoding="utf-8")
    with pytest.raises(DptoolError, match=r"vars\.dptool_min_support\.events is 0"):
        read_setting(tmp_path)


# a top 1 by region among groups of at least 30 rows, and the columns of its support query
RANKING = Candidate(Skeleton(metric="m", dimension="t.region", dimension_kind="spatial", rules=("r",), tables=("t",)),
                    "ranking", [], ["region"], "ranking", 1, 30)
SUPPORT_COLUMNS = ["region", "support_input", "support_entity", "support_min_rows", "support_min_entities",
                   "support_min_events", "support_rows", "support_all_rows", "support_entities", "support_events",
                   "value"]


def test_a_ranking_lists_groups_by_every_row_and_rests_on_the_rows_read():
    """A ranking's "at least 30 orders" counts every row (its gold's `having count(*)`): a group of 40 orders, 20
    of them read by the value, that a rule removes was asked for (removed), and a listed one of 20 read is thin."""
    rows = [("north", "m", "order_id", 30, 10, 10, 20, 40, 20, None, 1),
            ("south", "m", "order_id", 30, 10, 10, 20, 40, 20, None, 0)]
    gold = [("gold", "north", 1.0), ("base", "north", 1.0), ("base", "south", 2.0)]
    found = record(RANKING, ["variant", "region", "value"], gold, SUPPORT_COLUMNS, rows)
    assert found["removed"] == ["south"]
    assert found["groups"] == [{"group": "north", "rows": 20, "entities": 20}] and thin(found) == ["north"]


def test_a_ranking_rests_on_every_group_it_chose_among():
    """A top 1 among groups of at least 30 orders: east (40 orders, 5 read) is not shown but could have been, so
    the ranking is thin; west (10 orders) was never in the running, south is removed by a rule."""
    rows = [("north", "m", "order_id", 30, 10, 10, 60, 60, 50, None, 1),
            ("east", "m", "order_id", 30, 10, 10, 5, 40, 5, None, 1),
            ("west", "m", "order_id", 30, 10, 10, 2, 10, 2, None, 1),
            ("south", "m", "order_id", 30, 10, 10, 3, 40, 3, None, 0)]
    gold = [("gold", "north", 3.0), ("base", "south", 4.0)]
    found = record(RANKING, ["variant", "region", "value"], gold, SUPPORT_COLUMNS, rows)
    assert found["groups"] == [{"group": "north", "rows": 60, "entities": 50}]
    assert found["thin_unshown"] == ["east"] and thin(found) == ["east"]
    healthy = [r if r[0] != "east" else ("east", "m", "order_id", 30, 10, 10, 35, 40, 30, None, 1) for r in rows]
    assert thin(record(RANKING, ["variant", "region", "value"], gold, SUPPORT_COLUMNS, healthy)) == []
