"""Exact binomial bounds for tests that check a seeded coin's counts."""

from __future__ import annotations

import math
from itertools import accumulate


def binomial_bounds(trials: int, p: float, alpha: float) -> tuple[int, int]:
    """The counts outside both tails (each of mass at most alpha/2) of Binomial(trials, p), exactly."""
    log_choose = [
        math.lgamma(trials + 1) - math.lgamma(k + 1) - math.lgamma(trials - k + 1) for k in range(trials + 1)
    ]
    pmf = [
        math.exp(log_choose[k] + k * math.log(p) + (trials - k) * math.log1p(-p)) for k in range(trials + 1)
    ]
    low = sum(1 for mass in accumulate(pmf) if mass <= alpha / 2)
    high = trials - sum(1 for mass in accumulate(reversed(pmf)) if mass <= alpha / 2)
    return low, high
