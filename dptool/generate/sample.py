"""Stage 3: task skeletons — connected subgraphs from each metric, scored and selected (DI-Bench App. D)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations

from dptool.generate.graph import node_id
from dptool.project.catalog import Catalog, Dimension, Metric

WEIGHTS = {"semantic": 0.25, "rule_diversity": 0.20, "metric_rarity": 0.20, "cardinality": 0.20, "joins": 0.15}
MMR_LAMBDA = 0.3
# analysis types a dimension kind supports (DI-Bench §3.3); knowledge retrieval needs no skeleton
ANALYSIS_TYPES = {
    "temporal": ("point_query", "threshold_crossing", "trend_analysis", "counterfactual"),
    "spatial": ("point_query", "ranking", "threshold_crossing", "comparison", "significance_testing",
                "decomposition", "counterfactual"),
    "categorical": ("point_query", "ranking", "threshold_crossing", "comparison", "significance_testing",
                    "decomposition", "counterfactual"),
}


@dataclass(frozen=True)
class Skeleton:
    """A metric, the tables it reads, one dimension and some of the rules that govern it: a task's shape."""

    metric: str
    dimension: str  # Dimension.id
    dimension_kind: str
    rules: tuple[str, ...]
    tables: tuple[str, ...]

    @property
    def id(self) -> str:
        column = self.dimension.rsplit(".", 1)[-1]
        return "__".join([self.metric, column, *self.rules]) if self.rules else f"{self.metric}__{column}"

    @property
    def nodes(self) -> frozenset[str]:
        return frozenset(
            [node_id("metric", self.metric), node_id("dimension", self.dimension)]
            + [node_id("table", t) for t in self.tables]
            + [node_id("rule", r) for r in self.rules]
        )

    @property
    def analysis_types(self) -> tuple[str, ...]:
        return ANALYSIS_TYPES[self.dimension_kind]


def enumerate_skeletons(catalog: Catalog) -> list[Skeleton]:
    """Every (metric, dimension, rule subset) the graph connects: no rule, each rule, all rules.

    The rules are those that govern the metric (`Catalog.governing_rules`): a composite's include its
    components' rules, since it is computed from them, each under its own rules.
    """
    out = []
    for metric in sorted(catalog.metrics.values(), key=lambda m: m.id):
        rule_ids = [r.id for r in catalog.governing_rules(metric.id)]
        subsets = [()] + [(r,) for r in rule_ids]
        if len(rule_ids) > 1:
            subsets += [tuple(c) for c in combinations(rule_ids, len(rule_ids))]
        for dim in catalog.dimensions_of(metric):
            for rules in subsets:
                out.append(Skeleton(metric.id, dim.id, dim.kind, rules, metric.tables))
    return out


def cardinality_score(distinct: int, kind: str) -> float:
    """More distinct values give richer slices; dates depend on the window, not their count."""
    if kind == "temporal":
        return 0.7
    if distinct <= 1:
        return 0.1
    if distinct == 2:
        return 0.5
    if distinct <= 5:
        return 0.8
    return 1.0


def join_score(n_tables: int) -> float:
    return min(1.0, 0.25 * n_tables)


def semantic_score(metric: Metric, dim: Dimension, rules: tuple[str, ...], catalog: Catalog) -> float:
    """Whether grouping this metric by this dimension makes sense.

    A rule conditional on the dimension makes the pairing the natural one; a metric computed from the
    dimension's own column (review score by review score) is degenerate.
    """
    if any(dim.column in catalog.rules[r].applies_when for r in rules):
        return 1.0
    if dim.column in metric.value:
        return 0.1
    return {"spatial": 0.9, "temporal": 0.8, "categorical": 0.7}[dim.kind]


def quality(
    s: Skeleton, catalog: Catalog, cardinality: dict[str, int], rule_uses: Counter, metric_uses: Counter
) -> float:
    """q(S): the weighted sum of the five scorers of DI-Bench Appendix D.1."""
    return _quality(_static_terms(s, catalog, cardinality), s, rule_uses, metric_uses)


def _quality(static: tuple[float, float, float], s: Skeleton, rule_uses: Counter, metric_uses: Counter) -> float:
    # the weighted terms in the order of WEIGHTS: the static three computed once, the two that depend on
    # what is already taken computed per round
    semantic, card, joins = static
    rule_div = sum(1 / (1 + rule_uses[r]) for r in s.rules) / len(s.rules) if s.rules else 0.0
    return 0 + semantic + WEIGHTS["rule_diversity"] * rule_div + \
        WEIGHTS["metric_rarity"] * (1 / (1 + metric_uses[s.metric])) + card + joins


def _static_terms(s: Skeleton, catalog: Catalog, cardinality: dict[str, int]) -> tuple[float, float, float]:
    dim = catalog.dimensions[s.dimension]
    return (WEIGHTS["semantic"] * semantic_score(catalog.metrics[s.metric], dim, s.rules, catalog),
            WEIGHTS["cardinality"] * cardinality_score(cardinality.get(s.dimension, 0), dim.kind),
            WEIGHTS["joins"] * join_score(len(s.tables)))


def jaccard_distance(a: frozenset, b: frozenset) -> float:
    return 1.0 - len(a & b) / len(a | b)


def select_skeletons(
    candidates: list[Skeleton], catalog: Catalog, cardinality: dict[str, int], target_tasks: int,
    planned_tasks=None,
) -> list[tuple[Skeleton, float]]:
    """MMR selection (λ = 0.3, Jaccard distance over node sets) until the skeletons' analysis types
    reach `target_tasks`, then a coverage pass adding every metric and rule not yet selected.

    `planned_tasks(skeleton)` counts the tasks a skeleton is expected to give (default: its analysis types).
    """
    planned_tasks = planned_tasks or (lambda s: len(s.analysis_types))
    selected: list[tuple[Skeleton, float]] = []
    rule_uses: Counter = Counter()
    metric_uses: Counter = Counter()
    pool = list(candidates)

    def take(s: Skeleton, score: float) -> None:
        selected.append((s, score))
        pool.remove(s)
        rule_uses.update(s.rules)
        metric_uses[s.metric] += 1

    # the static terms of quality() once per skeleton; the distance to the nearest selected skeleton is
    # kept up to date with each take, not recomputed against every selected one (a 1,000-task target
    # takes ~150 rounds over ~1,100 skeletons)
    static = {c: _static_terms(c, catalog, cardinality) for c in pool}
    nearest = {c: 1.0 for c in pool}
    nodes = {c: c.nodes for c in pool}
    planned = 0
    while pool and planned < target_tasks:
        best, best_key = None, None
        for c in pool:
            q = _quality(static[c], c, rule_uses, metric_uses)
            mmr = (1 - MMR_LAMBDA) * q + MMR_LAMBDA * nearest[c]
            key = (round(mmr, 12), c.id)  # ties broken by id, never by set order
            if best_key is None or key > best_key:
                best, best_key = (c, q), key
        take(*best)
        planned += planned_tasks(best[0])
        for c in pool:
            nearest[c] = min(nearest[c], jaccard_distance(nodes[c], nodes[best[0]]))

    covered_metrics = {s.metric for s, _ in selected}
    covered_rules = {r for s, _ in selected for r in s.rules}
    wanted = [("metric", m) for m in sorted(catalog.metrics) if m not in covered_metrics]
    wanted += [("rule", r) for r in sorted(catalog.rules) if r not in covered_rules]
    for kind, key in wanted:
        options = [c for c in pool if (c.metric == key if kind == "metric" else key in c.rules)]
        if not options or (kind == "rule" and key in {r for s, _ in selected for r in s.rules}):
            continue
        scored = [(quality(c, catalog, cardinality, rule_uses, metric_uses), c.id, c) for c in options]
        q, _, c = max(scored)
        take(c, q)
    return selected
