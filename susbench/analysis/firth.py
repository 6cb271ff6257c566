"""Firth's penalized-likelihood logistic regression with penalized likelihood-ratio tests.

Rates of 0% and 100% (a careful baseline that always avoids, a type nobody falls for) separate a
plain logistic regression: its estimates run off to infinity. Firth's penalty, half the log
determinant of the Fisher information (Jeffreys' prior), keeps them finite. Tests follow R's
`logistf`: a hypothesis is a linear constraint beta = T gamma fitted *within the full model's
penalty*, and the statistic is twice the drop in penalized log-likelihood. One constraint matrix
covers a coefficient set to zero, a whole term dropped, and two levels of a factor made equal
(pairwise comparisons), so all of them are tested the same way.

Checked against `logistf`'s published results on its own example data (tests/data/logistf_sex2.csv).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import LinAlgError, cho_factor, cho_solve, cholesky, solve_triangular
from scipy.special import expit
from scipy.stats import chi2

from susbench.core.errors import SusbenchError

Matrix = NDArray[np.float64]

MAX_ITERATIONS = 200
MAX_HALVINGS = 30
MAX_STEP = 5.0
TOLERANCE = 1e-8


@dataclass(frozen=True)
class FirthFit:
    """A penalized fit: coefficients in the full parameterisation, and its penalized log-likelihood."""

    coefficients: Matrix
    loglik: float
    iterations: int
    converged: bool
    covariance: Matrix = field(repr=False)


@dataclass(frozen=True)
class LikelihoodRatio:
    """A penalized likelihood-ratio test of a constraint against the full fit."""

    statistic: float
    df: int
    p_value: float


def identity_constraint(parameters: int) -> Matrix:
    return np.eye(parameters)


def drop_constraint(parameters: int, dropped: list[int]) -> Matrix:
    """beta_j = 0 for every j in `dropped`: those columns of the identity are removed."""
    keep = [index for index in range(parameters) if index not in set(dropped)]
    return np.eye(parameters)[:, keep]


def equal_constraint(parameters: int, first: int, second: int) -> Matrix:
    """beta_first = beta_second: both columns driven by one free parameter."""
    matrix = np.eye(parameters)
    matrix[:, first] += matrix[:, second]
    return np.delete(matrix, second, axis=1)


@dataclass(frozen=True)
class _State:
    """Everything one Newton step needs at one beta: the penalized log-likelihood and its parts."""

    loglik: float
    probability: Matrix
    information: Matrix
    cholesky: Matrix | None  # lower factor of the information; None where it is singular


def _state(design: Matrix, outcome: Matrix, beta: Matrix) -> _State:
    eta = design @ beta
    probability = expit(eta)
    loglik = float(np.sum(outcome * eta - np.logaddexp(0.0, eta)))
    weight = probability * (1.0 - probability)
    information = design.T @ (weight[:, None] * design)
    try:
        factor = cholesky(information, lower=True)
    except LinAlgError:
        return _State(-np.inf, probability, information, None)
    # half the log determinant of the information, from its Cholesky factor
    return _State(loglik + float(np.sum(np.log(np.diag(factor)))), probability, information, factor)


def firth_fit(design: Matrix, outcome: Matrix, constraint: Matrix | None = None) -> FirthFit:
    """Maximise the penalized likelihood over beta = constraint @ gamma by Newton-Raphson.

    The step is the Fisher-scoring step on the modified score X'(y - p + h(1/2 - p)) (h: the hat
    matrix diagonal), capped at MAX_STEP per parameter and halved while the penalized
    log-likelihood would fall, as `logistf` does. Linear algebra goes through Cholesky factors.
    """
    parameters = design.shape[1]
    transform = identity_constraint(parameters) if constraint is None else constraint
    gamma = np.zeros(transform.shape[1])
    state = _state(design, outcome, transform @ gamma)
    if state.cholesky is None:
        raise SusbenchError("the model's design matrix is singular (a column repeats others); cannot fit")
    converged = False
    iterations = 0
    while iterations < MAX_ITERATIONS:
        probability = state.probability
        spread = solve_triangular(state.cholesky, design.T, lower=True)
        hat = probability * (1.0 - probability) * np.sum(spread * spread, axis=0)
        score = transform.T @ (design.T @ (outcome - probability + hat * (0.5 - probability)))
        if float(np.max(np.abs(score), initial=0.0)) < TOLERANCE:
            converged = True
            break
        step = cho_solve(cho_factor(transform.T @ state.information @ transform, lower=True), score)
        largest = float(np.max(np.abs(step)))
        if largest > MAX_STEP:
            step *= MAX_STEP / largest
        for _ in range(MAX_HALVINGS):
            trial = _state(design, outcome, transform @ (gamma + step))
            if trial.loglik >= state.loglik - 1e-12:
                break
            step /= 2.0
        if trial.cholesky is None:
            break
        gamma, state = gamma + step, trial
        iterations += 1
    assert state.cholesky is not None
    return FirthFit(
        coefficients=transform @ gamma,
        loglik=state.loglik,
        iterations=iterations,
        converged=converged,
        covariance=cho_solve((state.cholesky, True), np.eye(parameters)),
    )


def likelihood_ratio(design: Matrix, outcome: Matrix, full: FirthFit, constraint: Matrix) -> LikelihoodRatio:
    """Test `constraint` (beta = constraint @ gamma) against the full fit, within its penalty."""
    restricted = firth_fit(design, outcome, constraint)
    statistic = max(0.0, 2.0 * (full.loglik - restricted.loglik))
    df = design.shape[1] - constraint.shape[1]
    return LikelihoodRatio(statistic=statistic, df=df, p_value=float(chi2.sf(statistic, df)))
