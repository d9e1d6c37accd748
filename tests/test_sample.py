"""Stage 3: skeletons, the five scorers of DI-Bench Appendix D.1, MMR selection and the coverage pass."""

from __future__ import annotations

import json
from collections import Counter
from itertools import accumulate
from pathlib import Path

import pytest

from dptool.generate.sample import (
    ANALYSIS_TYPES,
    MMR_LAMBDA,
    WEIGHTS,
    Skeleton,
    cardinality_score,
    enumerate_skeletons,
    jaccard_distance,
    join_score,
    quality,
    select_skeletons,
)
from dptool.project.catalog import load_catalog

FIXTURES = Path(__file__).parent / "fixtures"
SHOP_TABLES = ("model.shop.customers", "model.shop.orders", "model.shop.payments")
CARDINALITY = {
    "model.shop.customers.city": 40,
    "model.shop.customers.state": 27,
    "model.shop.orders.status": 2,
    "model.shop.payments.method": 4,
    "model.shop.orders.ordered_at": 700,
}


@pytest.fixture(scope="module")
def shop():
    return load_catalog(json.loads((FIXTURES / "shop_manifest.json").read_text(encoding="utf-8")))


@pytest.mark.parametrize(
    ("distinct", "kind", "score"),
    [(0, "categorical", 0.1), (1, "categorical", 0.1), (2, "spatial", 0.5), (3, "categorical", 0.8),
     (5, "categorical", 0.8), (6, "spatial", 1.0), (5000, "categorical", 1.0), (1, "temporal", 0.7),
     (700, "temporal", 0.7)],
)
def test_cardinality_score(distinct, kind, score):
    assert cardinality_score(distinct, kind) == score


@pytest.mark.parametrize(("n_tables", "score"), [(1, 0.25), (2, 0.5), (3, 0.75), (4, 1.0), (7, 1.0)])
def test_join_score(n_tables, score):
    assert join_score(n_tables) == score


def test_jaccard_distance():
    assert jaccard_distance(frozenset("ab"), frozenset("bc")) == pytest.approx(2 / 3)
    assert jaccard_distance(frozenset("ab"), frozenset("ab")) == 0.0
    assert jaccard_distance(frozenset("ab"), frozenset("cd")) == 1.0
    assert jaccard_distance(frozenset("abcd"), frozenset("a")) == 0.75


def test_weights():
    assert WEIGHTS == {"semantic": 0.25, "rule_diversity": 0.20, "metric_rarity": 0.20, "cardinality": 0.20,
                       "joins": 0.15}
    assert sum(WEIGHTS.values()) == pytest.approx(1.0)
    assert MMR_LAMBDA == 0.3


def test_skeleton_id_and_nodes():
    s = Skeleton("avg_order_value", "model.shop.customers.state", "spatial", ("capital_override",),
                 ("model.shop.customers", "model.shop.orders"))
    assert s.id == "avg_order_value__state__capital_override"
    assert s.nodes == frozenset({"metric:avg_order_value", "dimension:model.shop.customers.state",
                                 "table:model.shop.customers", "table:model.shop.orders", "rule:capital_override"})
    assert s.analysis_types == ("point_query", "ranking", "threshold_crossing", "comparison", "significance_testing",
                                "decomposition", "counterfactual")
    assert Skeleton("m", "t.d", "temporal", (), ()).id == "m__d"
    assert Skeleton("m", "t.d", "temporal", (), ()).analysis_types == (
        "point_query", "threshold_crossing", "trend_analysis", "counterfactual")
    assert Skeleton("m", "t.d", "categorical", (), ()).analysis_types == s.analysis_types


def test_analysis_types_per_dimension_kind():
    # knowledge retrieval needs no skeleton: it is no dimension's analysis type
    assert ANALYSIS_TYPES == {
        "temporal": ("point_query", "threshold_crossing", "trend_analysis", "counterfactual"),
        "spatial": ("point_query", "ranking", "threshold_crossing", "comparison", "significance_testing",
                    "decomposition", "counterfactual"),
        "categorical": ("point_query", "ranking", "threshold_crossing", "comparison", "significance_testing",
                        "decomposition", "counterfactual"),
    }
    every = {t for types in ANALYSIS_TYPES.values() for t in types}
    assert len(every) == 8
    assert "knowledge_retrieval" not in every
    # a trend needs a time axis; rankings, comparisons, tests and breakdowns need groups
    assert {t for t in every if t not in ANALYSIS_TYPES["temporal"]} == {
        "ranking", "comparison", "significance_testing", "decomposition"}


def test_enumerate_skeletons(shop):
    skeletons = enumerate_skeletons(shop)
    # avg_order_value: 5 dimensions x (none, each of 2 rules, both); paid_rate: 2 dimensions x (none, its rule)
    assert len(skeletons) == 5 * 4 + 2 * 2
    assert {s.rules for s in skeletons if s.metric == "avg_order_value"} == {
        (), ("capital_override",), ("exclude_tests",), ("capital_override", "exclude_tests")}
    assert {s.dimension for s in skeletons if s.metric == "paid_rate"} == {
        "model.shop.orders.ordered_at", "model.shop.orders.status"}
    assert len({s.id for s in skeletons}) == len(skeletons)


def test_quality_by_hand(shop):
    s = Skeleton("avg_order_value", "model.shop.customers.city", "spatial", ("exclude_tests",), SHOP_TABLES)
    # semantic .9 (spatial), rule diversity 1, metric rarity 1, cardinality 1.0 (40 values), joins .75 (3 tables)
    assert quality(s, shop, CARDINALITY, Counter(), Counter()) == pytest.approx(
        0.25 * 0.9 + 0.20 * 1 + 0.20 * 1 + 0.20 * 1.0 + 0.15 * 0.75)
    # once the rule and the metric were used: rule diversity 1/3, metric rarity 1/2
    used = quality(s, shop, CARDINALITY, Counter({"exclude_tests": 2}), Counter({"avg_order_value": 1}))
    assert used == pytest.approx(0.25 * 0.9 + 0.20 / 3 + 0.20 / 2 + 0.20 * 1.0 + 0.15 * 0.75)


def test_semantic_score_rule_on_dimension_wins(shop):
    state = Skeleton("avg_order_value", "model.shop.customers.state", "spatial", ("capital_override",), SHOP_TABLES)
    city = Skeleton("avg_order_value", "model.shop.customers.city", "spatial", ("capital_override",), SHOP_TABLES)
    # same cardinality score; the rule conditional on state makes state the natural pairing (1.0 vs 0.9)
    delta = quality(state, shop, CARDINALITY, Counter(), Counter()) - quality(city, shop, CARDINALITY, Counter(),
                                                                              Counter())
    assert delta == pytest.approx(0.25 * (1.0 - 0.9))


def test_unknown_cardinality_scores_as_one_value(shop):
    s = Skeleton("paid_rate", "model.shop.orders.status", "categorical", (), ("model.shop.orders",))
    with_card = quality(s, shop, {"model.shop.orders.status": 40}, Counter(), Counter())
    without = quality(s, shop, {}, Counter(), Counter())
    assert with_card - without == pytest.approx(0.20 * (1.0 - 0.1))


def test_mmr_first_pick_is_highest_quality(shop):
    candidates = enumerate_skeletons(shop)
    selected = select_skeletons(candidates, shop, CARDINALITY, target_tasks=12)
    first, q = selected[0]
    # semantic 1.0 (capital_override applies to state), both rules new, cardinality 1.0, 3 tables
    assert first == Skeleton("avg_order_value", "model.shop.customers.state", "spatial",
                             ("capital_override", "exclude_tests"), SHOP_TABLES)
    assert q == pytest.approx(0.25 + 0.20 + 0.20 + 0.20 + 0.15 * 0.75)
    best = max(quality(c, shop, CARDINALITY, Counter(), Counter()) for c in candidates)
    assert q == pytest.approx(best)


MMR_ORDER = [
    ("avg_order_value__state__capital_override__exclude_tests", 0.9625),
    ("paid_rate__ordered_at__paid_definition", 0.7775),
    ("avg_order_value__city__exclude_tests", 0.7375),
    ("avg_order_value__city__capital_override", 0.704167),
    ("avg_order_value__state__capital_override", 0.679167),
]


def test_mmr_selection(shop):
    selected = select_skeletons(enumerate_skeletons(shop), shop, CARDINALITY, target_tasks=12)
    # picks stop once their analysis types reach 12: 7 (spatial) + 4 (temporal) + 7 (spatial) = 18
    assert [(s.id, round(q, 6)) for s, q in selected] == MMR_ORDER[:3]
    assert [len(s.analysis_types) for s, _ in selected] == [7, 4, 7]


@pytest.mark.parametrize(("target", "picks"), [(11, 2), (12, 3), (18, 3), (19, 4), (25, 4), (26, 5), (32, 5)])
def test_mmr_stops_once_the_target_is_reached(shop, target, picks):
    # planned types after each pick: 7, 11, 18, 25, 32; a target met exactly stops there
    selected = select_skeletons(enumerate_skeletons(shop), shop, CARDINALITY, target_tasks=target)
    assert [(s.id, round(q, 6)) for s, q in selected] == MMR_ORDER[:picks]


def test_coverage_with_tiny_target(shop):
    selected = select_skeletons(enumerate_skeletons(shop), shop, CARDINALITY, target_tasks=1)
    # one MMR pick, then the coverage pass adds paid_rate (whose best skeleton also covers its rule)
    assert [(s.id, round(q, 6)) for s, q in selected] == [
        ("avg_order_value__state__capital_override__exclude_tests", 0.9625),
        ("paid_rate__ordered_at__paid_definition", 0.7775),
    ]


def test_coverage_of_demo(demo_catalog):
    cardinality = {d: 10 for d in demo_catalog.dimensions}
    selected = select_skeletons(enumerate_skeletons(demo_catalog), demo_catalog, cardinality, target_tasks=1)
    assert {s.metric for s, _ in selected} == set(demo_catalog.metrics)
    assert {r for s, _ in selected for r in s.rules} == set(demo_catalog.rules)
    assert len({s.id for s, _ in selected}) == len(selected)


def test_selection_deterministic(demo_catalog):
    cardinality = {d: 7 + i for i, d in enumerate(sorted(demo_catalog.dimensions))}
    candidates = enumerate_skeletons(demo_catalog)
    first = select_skeletons(candidates, demo_catalog, cardinality, target_tasks=40)
    again = select_skeletons(candidates, demo_catalog, cardinality, target_tasks=40)
    shuffled = select_skeletons(list(reversed(candidates)), demo_catalog, cardinality, target_tasks=40)
    assert first == again
    assert [s.id for s, _ in shuffled] == [s.id for s, _ in first]
    # MMR stops at the first pick whose planned analysis types reach the target of 40 ...
    planned = list(accumulate(len(s.analysis_types) for s, _ in first))
    n_mmr = next(i for i, p in enumerate(planned, start=1) if p >= 40)
    assert n_mmr >= 2 and planned[n_mmr - 2] < 40 <= planned[n_mmr - 1] <= 40 + 6
    # ... then each coverage pick brings a metric or a rule that no earlier pick had
    for i in range(n_mmr, len(first)):
        s = first[i][0]
        earlier = [e for e, _ in first[:i]]
        assert s.metric not in {e.metric for e in earlier} or set(s.rules) - {r for e in earlier for r in e.rules}
    assert {s.metric for s, _ in first} == set(demo_catalog.metrics)
    assert {r for s, _ in first for r in s.rules} == set(demo_catalog.rules)


def test_selection_does_not_consume_candidates(shop):
    candidates = enumerate_skeletons(shop)
    select_skeletons(candidates, shop, CARDINALITY, target_tasks=12)
    assert len(candidates) == 24
