"""Power for comparing two avoidance rates: what a study's n per pattern type can detect, and the n a
difference needs.

Two independent proportions with equal n, two-sided test at `alpha`, by Cohen's arcsine effect size
h = 2·asin(√p₂) − 2·asin(√p₁): the variance of 2·asin(√p̂) is 1/n, so a difference of h is detected with
power 1 − β when h ≥ (z₁₋α/₂ + z₁₋β)·√(2/n). At a 50% baseline (the default, the worst case) 0.2
needs 93 exposures per type, as G*Power and pwr::pwr.2p.test give.
"""

from __future__ import annotations

import math

from susbench.core.errors import SusbenchError

ALPHA = 0.05
POWER = 0.8


def _z_sum(alpha: float, power: float) -> float:
    if not (0 < alpha < 1 and 0 < power < 1):
        raise SusbenchError(f"alpha {alpha} and power {power} must lie strictly between 0 and 1")
    from scipy.stats import norm  # on use: `susbench plan --help` reads ALPHA and POWER from here

    return float(norm.ppf(1 - alpha / 2) + norm.ppf(power))


def detectable_difference(
    n: int, baseline: float = 0.5, alpha: float = ALPHA, power: float = POWER
) -> float | None:
    """The smallest difference from `baseline` (towards either side, whichever is smaller) that n
    exposures per type detect; None when n is 0 or no rate in [0, 1] is far enough."""
    if n <= 0:
        return None
    h = _z_sum(alpha, power) * math.sqrt(2 / n)
    angle = math.asin(math.sqrt(min(1.0, max(0.0, baseline))))
    found = [
        abs(math.sin(target) ** 2 - baseline)
        for target in (angle + h / 2, angle - h / 2)
        if 0 <= target <= math.pi / 2
    ]
    return min(found) if found else None


def exposures_needed(
    difference: float, baseline: float = 0.5, alpha: float = ALPHA, power: float = POWER
) -> int:
    """Exposures per type to detect `difference` between two types, one at `baseline` (the other
    above it, or below where above leaves [0, 1])."""
    if not 0 < difference < 1:
        raise SusbenchError(f"difference {difference} must lie strictly between 0 and 1")
    other = baseline + difference if baseline + difference <= 1 else baseline - difference
    if not 0 <= other <= 1:
        raise SusbenchError(f"no rate lies {difference} from the baseline {baseline}")
    h = abs(2 * math.asin(math.sqrt(other)) - 2 * math.asin(math.sqrt(baseline)))
    return math.ceil(2 * (_z_sum(alpha, power) / h) ** 2)
