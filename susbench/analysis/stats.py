"""Interval estimates and exact tests for binary outcomes, and Holm's multiplicity correction.

Scripted baselines and small cells give 0% and 100% rates, so every method here is one that stays
valid there: Wilson's score interval, McNemar's exact (binomial) test, and Newcombe's
square-and-add interval for a paired difference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy.stats import binom

Z_95 = 1.959963984540054


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (always contains p); (0, 1) without trials."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    # At 0% and 100% one bound equals p in exact arithmetic; keep rounding from putting p outside.
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """Two-sided exact McNemar p-value from the two discordant counts (1.0 when there are none)."""
    discordant = only_first + only_second
    if discordant == 0:
        return 1.0
    return min(1.0, 2.0 * float(binom.cdf(min(only_first, only_second), discordant, 0.5)))


def paired_difference_interval(
    both: int, only_first: int, only_second: int, neither: int, z: float = Z_95
) -> tuple[float, float, float]:
    """Difference p1 - p2 of paired proportions with Newcombe's square-and-add interval.

    p1 = (both + only_first) / n and p2 = (both + only_second) / n; the interval combines the two
    Wilson intervals with the (continuity-corrected) correlation of the pairs (Newcombe 1998,
    method 10). Returns (estimate, low, high); (0, -1, 1) when there are no pairs.
    """
    n = both + only_first + only_second + neither
    if n == 0:
        return 0.0, -1.0, 1.0
    first, second = both + only_first, both + only_second
    p1, p2 = first / n, second / n
    low1, high1 = wilson_interval(first, n, z)
    low2, high2 = wilson_interval(second, n, z)
    margins = first * (n - first) * second * (n - second)
    cross = both * neither - only_first * only_second
    if margins == 0 or 0 <= cross <= n / 2:
        phi = 0.0
    elif cross > n / 2:
        phi = (cross - n / 2) / math.sqrt(margins)
    else:
        phi = cross / math.sqrt(margins)
    below = math.sqrt(max(0.0, (p1 - low1) ** 2 + (high2 - p2) ** 2 - 2 * phi * (p1 - low1) * (high2 - p2)))
    above = math.sqrt(max(0.0, (p2 - low2) ** 2 + (high1 - p1) ** 2 - 2 * phi * (p2 - low2) * (high1 - p1)))
    estimate = p1 - p2
    return estimate, max(-1.0, estimate - below), min(1.0, estimate + above)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order (monotone, capped at 1)."""
    order = sorted(range(len(p_values)), key=lambda index: p_values[index])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def significance_label(p_value: float) -> str:
    """The paper's bracket labels: *** < .001, ** < .01, * < .05, else n.s."""
    if p_value < 0.001:
        return "***"
    if p_value < 0.01:
        return "**"
    if p_value < 0.05:
        return "*"
    return "n.s."
