"""Firth's logistic regression against R's logistf on its own example data, and known closed forms."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from susbench.analysis.firth import drop_constraint, equal_constraint, firth_fit, likelihood_ratio

SEX2 = Path(__file__).parents[1] / "data" / "logistf_sex2.csv"
NAMES = ("(Intercept)", "age", "oc", "vic", "vicl", "vis", "dia")
# logistf tests/testthat/test-basic.R
COEFFICIENTS = (0.12025404, -1.10598130, -0.06881673, 2.26887464, -2.11140816, -0.78831694, 3.09601263)
# summary(logistf(...)) on sex2: penalized LR chi-square and p of each coefficient
CHISQ = (0.06286298, 7.50773092, 0.02467044, 22.93139022, 19.10407252, 3.69740975, 7.89693139)
P_VALUES = (8.020268e-01, 6.143472e-03, 8.751911e-01, 1.678877e-06, 1.237805e-05, 5.449701e-02, 4.951873e-03)


@pytest.fixture(scope="module")
def sex2() -> tuple[np.ndarray, np.ndarray]:
    data = np.loadtxt(SEX2, delimiter=",", skiprows=1)
    assert data.shape == (239, 7)
    return np.column_stack([np.ones(len(data)), data[:, 1:]]), data[:, 0]


def test_coefficients_match_logistf(sex2: tuple[np.ndarray, np.ndarray]) -> None:
    design, outcome = sex2
    fit = firth_fit(design, outcome)
    assert fit.converged
    assert fit.coefficients == pytest.approx(COEFFICIENTS, abs=5e-4)


@pytest.mark.parametrize("index", range(len(NAMES)), ids=NAMES)
def test_penalized_likelihood_ratio_tests_match_logistf(
    sex2: tuple[np.ndarray, np.ndarray], index: int
) -> None:
    design, outcome = sex2
    test = likelihood_ratio(design, outcome, firth_fit(design, outcome), drop_constraint(7, [index]))
    assert test.df == 1
    assert test.statistic == pytest.approx(CHISQ[index], abs=5e-4)
    assert test.p_value == pytest.approx(P_VALUES[index], rel=1e-3, abs=5e-4)


def test_whole_model_test_and_constrained_fit_match_logistf(sex2: tuple[np.ndarray, np.ndarray]) -> None:
    design, outcome = sex2
    full = firth_fit(design, outcome)
    test = likelihood_ratio(design, outcome, full, drop_constraint(7, [1, 2, 3, 4, 5, 6]))
    assert (test.df, round(test.statistic, 3)) == (6, 49.091)
    assert test.p_value == pytest.approx(7.15089e-09, rel=1e-3)
    # terms.fit = c(1, 2): intercept and age free, the rest held at 0 inside the full penalty
    partial = firth_fit(design, outcome, drop_constraint(7, [2, 3, 4, 5, 6]))
    assert partial.coefficients[:2] == pytest.approx((0.3023695, -0.8159534), abs=1e-3)
    assert not partial.coefficients[2:].any()


def test_separated_two_by_two_table_is_the_haldane_log_odds_ratio() -> None:
    """For one binary factor Firth's estimate is log((a+.5)(d+.5)/((b+.5)(c+.5))), even when separated."""
    cells = {(0, 0): 7, (0, 1): 0, (1, 0): 0, (1, 1): 5}  # (group, outcome): count; complete separation
    rows = [(group, outcome) for (group, outcome), count in cells.items() for _ in range(count)]
    design = np.array([[1.0, group] for group, _ in rows])
    outcome = np.array([float(result) for _, result in rows])
    fit = firth_fit(design, outcome)
    assert fit.converged and np.isfinite(fit.coefficients).all()
    assert fit.coefficients[0] == pytest.approx(math.log(0.5 / 7.5), abs=1e-6)
    assert fit.coefficients[1] == pytest.approx(math.log((5.5 * 7.5) / (0.5 * 0.5)), abs=1e-6)


def test_equal_constraint_is_the_test_between_two_levels() -> None:
    """beta_1 = beta_2 tested within the model equals the same test with level 1 as reference."""
    rng = np.random.default_rng(7)
    level = rng.integers(0, 3, 120)
    outcome = (rng.random(120) < np.array([0.2, 0.5, 0.9])[level]).astype(float)
    as_reference_0 = np.column_stack([np.ones(120), level == 1, level == 2]).astype(float)
    as_reference_1 = np.column_stack([np.ones(120), level == 0, level == 2]).astype(float)
    first = likelihood_ratio(
        as_reference_0, outcome, firth_fit(as_reference_0, outcome), equal_constraint(3, 1, 2)
    )
    second = likelihood_ratio(
        as_reference_1, outcome, firth_fit(as_reference_1, outcome), drop_constraint(3, [2])
    )
    assert first.df == second.df == 1
    assert first.statistic == pytest.approx(second.statistic, abs=1e-6)
    assert first.statistic > 1.0
