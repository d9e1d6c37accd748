"""Augmentation: the candidates that raise each analysis type to its minimum, probing no more options than it needs."""

from __future__ import annotations

from collections import Counter

import pytest

from dptool.generate.ids import Ids
from dptool.generate.instantiate import instantiate
from dptool.generate.pipeline import SQL_TYPES, _augmentation, _wave
from dptool.generate.probe import Probe
from dptool.generate.sample import enumerate_skeletons, quality
from tests.test_instantiate import PROFILES, SHOP

# the rules change every month of the profiled span and every value profiled
MONTHS = [(2017, m) for m in range(1, 13)] + [(2018, m) for m in range(1, 7)]
CELLS = {month: {v for p in PROFILES.values() for v, _ in p.top_values} for month in MONTHS}
POOL = [s for s in enumerate_skeletons(SHOP) if s.dimension in PROFILES]
CARDINALITY = {k: p.distinct for k, p in PROFILES.items()}


def _probe() -> Probe:
    return Probe(by_month=CELLS, rows_by_month=CELLS)


def _waves(min_per_type: int, tasks: list | None = None) -> tuple[list, list[list[str]]]:
    """_augmentation of a run with `tasks` (none): its candidates, and the skeletons each dbt compile probed."""
    probes: dict = {}
    calls: list[list[str]] = []

    def probe_more(more):  # as generate's: a probe of each skeleton with rules not probed yet, in one compile
        fresh = list({s.id: s for s in more if s.rules and s.id not in probes}.values())
        calls.append([s.id for s in fresh])
        probes.update({s.id: _probe() for s in fresh})

    extra, _ = _augmentation(tasks or [], POOL, set(), SHOP, PROFILES, CARDINALITY, 42, "duckdb", min_per_type,
                             Ids(), probes, probe_more)
    return extra, calls


def _offered_at_once(min_per_type: int) -> list:
    """Every option offered probed and made at once, a type after the other: the candidates kept."""
    ranked = sorted(POOL, key=lambda s: (-quality(s, SHOP, CARDINALITY, Counter(), Counter()), s.id))
    ids, extra = Ids(), []
    for kind in SQL_TYPES:
        offered = [s for s in ranked if kind in s.analysis_types][: 12 * min_per_type]
        made = instantiate(offered, SHOP, PROFILES, 42, "duckdb", types=(kind,), ids=ids, support=True,
                           probes={s.id: _probe() for s in offered if s.rules})
        extra += made[: 3 * min_per_type + 3]
        for c in made[3 * min_per_type + 3:]:
            ids.forget(c.task_id)
    return extra


@pytest.mark.parametrize("min_per_type", [1, 2, 4])
def test_waves_keep_the_candidates_of_every_option_offered_at_once(min_per_type):
    extra, calls = _waves(min_per_type)
    expected = _offered_at_once(min_per_type)
    assert extra, "the shop's options make candidates"
    assert [c.task_id for c in extra] == [c.task_id for c in expected]
    probed = [s for call in calls for s in call]
    assert len(probed) == len(set(probed)), "no skeleton is probed twice"


def test_a_type_whose_options_give_candidates_probes_only_what_it_keeps():
    # two point queries missing: twenty-four options offered, nine candidates kept; the first wave, eighteen
    # options, gives them, and the rest are not probed
    others = [{"domain": "sales", "analysis_type": k} for k in SQL_TYPES if k != "point_query"] * 2
    extra, calls = _waves(2, others)
    assert {c.analysis_type for c in extra} == {"point_query"} and len(extra) == 9
    offered = [s for s in POOL if "point_query" in s.analysis_types and s.rules]
    assert len(calls) == 1 and 0 < len(calls[0]) < len(offered)


@pytest.mark.parametrize("lacking, made, probed, left, wave", [
    (6, 0, 0, 24, 12),   # first: twice what it lacks
    (6, 0, 0, 5, 5),     # never more than are left
    (3, 6, 12, 12, 9),   # half the options gave one: 3 / (6 / 12) = 6, and half again
    (3, 0, 12, 12, 12),  # none gave one: every option left
])
def test_the_next_wave(lacking, made, probed, left, wave):
    assert _wave(lacking, made, probed, left) == wave
