"""Weighted random choice for the demo generators: the same rng gives the same picks."""

from __future__ import annotations

import bisect
import random
from collections.abc import Sequence
from itertools import accumulate


class Weighted:
    """Weighted choice by bisecting cumulative weights (fast, and deterministic for a given rng)."""

    def __init__(self, items: Sequence, weights: Sequence[float]):
        self.items = list(items)
        self.cum = list(accumulate(weights))
        self.total = self.cum[-1]

    def pick(self, rng: random.Random):
        return self.items[bisect.bisect_right(self.cum, rng.random() * self.total)]


def weighted(mapping: dict) -> Weighted:
    """Choose a key of `mapping`, weighted by its value."""
    return Weighted(list(mapping), list(mapping.values()))
