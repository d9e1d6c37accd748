"""Confidence intervals and reliability of a run: Wilson score intervals, pass@1 and pass^k.

The unit of sampling is the task: a benchmark's tasks are a sample of the questions a data team asks, and the
k attempts of one task are not independent draws (the same question, the same model, often the same answer).
So every interval here is over tasks, never over attempts: with k attempts, each task's outcome is its pass
rate c/k, and the interval is the Wilson score interval of their mean with n = the number of tasks. A rate in
[0, 1] with mean p has a variance of at most p(1 − p), the variance Wilson assumes, so the interval is
conservative for k > 1 and is the ordinary Wilson interval of a proportion for k = 1. Unlike a t or bootstrap
interval it does not shrink to a point when every task scored 0 or 1 (0 of 30 gives 0–11.4 %, not 0–0 %).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal distribution


def wilson(p: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (or a mean of rates in [0, 1]) `p` observed over `n` units."""
    if n <= 0:
        raise ValueError("an interval needs at least one observation")
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z2 / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def pass_hat(correct: Sequence[int], k: int, j: int | None = None) -> float:
    """pass^j (τ²-bench): the chance that j attempts of a task drawn at random are all right, averaged over tasks,
    from `correct[i]` right of `k` attempts of task i: mean of C(c, j) / C(k, j). j = k (the default): the share of
    tasks right in every attempt; j = 1: pass@1, the mean pass rate."""
    j = k if j is None else j
    if not correct or not 1 <= j <= k:
        raise ValueError("pass^j needs tasks and 1 <= j <= k")
    return sum(math.comb(c, j) for c in correct) / (math.comb(k, j) * len(correct))
