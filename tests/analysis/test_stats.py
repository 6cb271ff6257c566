"""Wilson, McNemar and Holm against statsmodels; Newcombe's paired interval against a published value."""

from __future__ import annotations

import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from susbench.analysis.stats import (
    holm,
    mcnemar_exact,
    paired_difference_interval,
    significance_label,
    wilson_interval,
)

PROPORTIONS = [(0, 1), (0, 10), (1, 2), (3, 4), (8, 10), (10, 10), (50, 100), (17, 239), (999, 1000)]


@pytest.mark.parametrize(("successes", "trials"), PROPORTIONS)
def test_wilson_matches_statsmodels(successes: int, trials: int) -> None:
    expected = proportion_confint(successes, trials, alpha=0.05, method="wilson")
    assert wilson_interval(successes, trials) == pytest.approx(expected, abs=1e-12)


def test_wilson_without_trials_is_uninformative() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("only_first", "only_second"), [(0, 0), (0, 1), (1, 1), (0, 7), (3, 12), (25, 25), (40, 20)]
)
def test_mcnemar_exact_matches_statsmodels(only_first: int, only_second: int) -> None:
    expected = mcnemar([[10, only_first], [only_second, 10]], exact=True).pvalue
    assert mcnemar_exact(only_first, only_second) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "p_values", [[0.01, 0.04, 0.03, 0.2], [0.5], [0.001, 0.001, 0.9, 0.04, 0.3, 0.02], [1.0, 0.0, 0.049]]
)
def test_holm_matches_statsmodels(p_values: list[float]) -> None:
    expected = multipletests(p_values, method="holm")[1]
    assert holm(p_values) == pytest.approx(list(expected), abs=1e-12)


def test_paired_difference_matches_the_published_newcombe_interval() -> None:
    """Cavo et al. (2012): [[59, 6], [16, 80]] gives -0.0621 (95% CI -0.1186 to -0.0046)."""
    estimate, low, high = paired_difference_interval(both=59, only_first=6, only_second=16, neither=80)
    assert (round(estimate, 4), round(low, 4), round(high, 4)) == (-0.0621, -0.1186, -0.0046)


def test_paired_difference_of_identical_runs_is_zero_and_bounded() -> None:
    estimate, low, high = paired_difference_interval(both=9, only_first=0, only_second=0, neither=9)
    assert estimate == 0.0
    assert -1.0 <= low < 0.0 < high <= 1.0


@pytest.mark.parametrize(
    ("p", "label"), [(0.0004, "***"), (0.004, "**"), (0.04, "*"), (0.05, "n.s."), (0.9, "n.s.")]
)
def test_significance_labels(p: float, label: str) -> None:
    assert significance_label(p) == label


def test_wilson_interval_always_contains_the_rate() -> None:
    """At 0% and 100% rounding once put 3/3's upper bound a hair below 1 (a negative error bar)."""
    for trials in range(1, 300):
        for successes in (0, trials // 3, trials):
            low, high = wilson_interval(successes, trials)
            assert 0.0 <= low <= successes / trials <= high <= 1.0
