"""The regression the paper reports: avoided ~ operator + pattern_type, fitted by Firth's method.

Only exposures (avoided or not_avoided) enter. Factors use treatment coding with the first level as
reference; columns that the data cannot separate from others (an interaction cell nobody visited,
a task nested in its type) are dropped and named in `notes`. Every p-value is a penalized
likelihood-ratio test: of each term as a whole, of each coefficient, and of every pair of operators
and of types (the bracket labels of Figure 4), the pairs Holm-corrected within each factor.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import combinations

import numpy as np
from pydantic import Field
from scipy.linalg import qr
from threadpoolctl import threadpool_limits

from susbench.analysis.firth import (
    FirthFit,
    Matrix,
    drop_constraint,
    equal_constraint,
    firth_fit,
    likelihood_ratio,
)
from susbench.analysis.results import EpisodeRow
from susbench.analysis.stats import holm, significance_label
from susbench.core.models import PATTERN_TYPES, Frozen

FACTORS = ("operator", "pattern_type")


class ModelSpec(Frozen):
    """Which terms to add to the main effects."""

    interaction: bool = Field(default=False, description="operator:pattern_type")
    task_effect: bool = Field(default=False, description="task as a fixed grouping factor, if repeated")


class Coefficient(Frozen):
    term: str
    level: str
    estimate: float = Field(description="log odds ratio of avoiding against the reference level")
    odds_ratio: float
    chi2: float
    p_value: float


class TermTest(Frozen):
    term: str
    df: int
    chi2: float
    p_value: float


class Comparison(Frozen):
    """One pair of levels of a factor, adjusted for the model's other terms."""

    factor: str
    first: str
    second: str
    log_odds_ratio: float = Field(description="second against first")
    chi2: float
    p_value: float
    p_holm: float
    label: str = Field(description="***, **, * or n.s. from the Holm-adjusted p-value")


ESTIMATOR = "Firth's penalized-likelihood logistic regression"
TESTS = "penalized likelihood-ratio tests; pairs Holm-adjusted within each factor"
MIN_EXPOSURES = 6


class ModelReport(Frozen):
    estimator: str = ESTIMATOR
    tests: str = TESTS
    formula: str
    exposures: int
    converged: bool
    references: dict[str, str]
    coefficients: tuple[Coefficient, ...]
    terms: tuple[TermTest, ...]
    comparisons: tuple[Comparison, ...]
    notes: tuple[str, ...] = ()


class _Design:
    """Treatment-coded columns and which term each belongs to."""

    def __init__(self) -> None:
        self.columns: list[np.ndarray] = []
        self.terms: list[str] = []
        self.levels: list[str] = []

    def add(self, term: str, level: str, column: np.ndarray) -> None:
        self.columns.append(column.astype(float))
        self.terms.append(term)
        self.levels.append(level)

    def matrix(self) -> Matrix:
        return np.column_stack(self.columns)

    def indices(self, term: str) -> list[int]:
        return [index for index, name in enumerate(self.terms) if name == term]

    def index(self, term: str, level: str) -> int | None:
        for index, (name, value) in enumerate(zip(self.terms, self.levels, strict=True)):
            if (name, value) == (term, level):
                return index
        return None

    def drop_aliased(self) -> list[str]:
        """Remove columns that are linear combinations of earlier ones (rank-revealing QR)."""
        matrix = self.matrix()
        _, r, pivots = qr(matrix, mode="economic", pivoting=True)
        diagonal = np.abs(np.diag(r))
        rank = int(np.sum(diagonal > diagonal[0] * 1e-9)) if diagonal.size else 0
        keep = sorted(pivots[:rank].tolist())
        dropped = [f"{self.terms[i]}={self.levels[i]}" for i in range(len(self.columns)) if i not in keep]
        self.columns = [self.columns[i] for i in keep]
        self.terms = [self.terms[i] for i in keep]
        self.levels = [self.levels[i] for i in keep]
        return dropped


def _levels(episodes: Sequence[EpisodeRow], factor: str) -> list[str]:
    present = {str(getattr(episode, factor)) for episode in episodes}
    if factor == "pattern_type":
        return [name for name in PATTERN_TYPES if name in present]
    return sorted(present)


def _build(episodes: Sequence[EpisodeRow], spec: ModelSpec) -> tuple[_Design, list[str], dict[str, str]]:
    design = _Design()
    design.add("(intercept)", "", np.ones(len(episodes)))
    notes: list[str] = []
    references: dict[str, str] = {}
    factors: list[str] = []
    for factor in FACTORS:
        levels = _levels(episodes, factor)
        if len(levels) < 2:
            notes.append(f"{factor} left out: only {', '.join(levels) or 'no level'} present")
            continue
        factors.append(factor)
        references[factor] = levels[0]
        values = np.array([str(getattr(episode, factor)) for episode in episodes])
        for level in levels[1:]:
            design.add(factor, level, values == level)
    if spec.interaction and len(factors) == 2:
        operators = np.array([episode.operator for episode in episodes])
        types = np.array([str(episode.pattern_type) for episode in episodes])
        for operator in _levels(episodes, "operator")[1:]:
            for pattern_type in _levels(episodes, "pattern_type")[1:]:
                column = (operators == operator) & (types == pattern_type)
                design.add("operator:pattern_type", f"{operator}:{pattern_type}", column)
    elif spec.interaction:
        notes.append("interaction left out: it needs two operators and two types")
    if spec.task_effect:
        counts = Counter(episode.task_id for episode in episodes)
        if max(counts.values()) < 2:
            notes.append("task left out: every task has one exposure, so no repeats to group")
        else:
            tasks = sorted(counts)
            references["task"] = tasks[0]
            values = np.array([episode.task_id for episode in episodes])
            for task in tasks[1:]:
                design.add("task", task, values == task)
    dropped = design.drop_aliased()
    if dropped:
        notes.append(
            f"{len(dropped)} column(s) not identifiable from the data, dropped: {', '.join(dropped)}"
        )
    return design, notes, references


def _formula(design: _Design) -> str:
    terms = list(dict.fromkeys(term for term in design.terms if term != "(intercept)"))
    return "avoided ~ " + (" + ".join(terms) if terms else "1")


def _pair_constraint(design: _Design, factor: str, first: str, second: str) -> Matrix:
    """beta(second) = beta(first); the reference level's beta is zero."""
    parameters = len(design.columns)
    first_index, second_index = design.index(factor, first), design.index(factor, second)
    if first_index is None:
        assert second_index is not None
        return drop_constraint(parameters, [second_index])
    if second_index is None:
        return drop_constraint(parameters, [first_index])
    return equal_constraint(parameters, first_index, second_index)


def _comparisons(
    design: _Design, outcome: Matrix, fit: FirthFit, references: dict[str, str]
) -> list[Comparison]:
    """Every pair of levels of each factor, Holm-corrected within the factor."""
    matrix = design.matrix()
    found: list[Comparison] = []
    for factor in (name for name in FACTORS if name in references):
        fitted = {
            level: float(fit.coefficients[index])
            for index, level in enumerate(design.levels)
            if design.terms[index] == factor
        }
        levels = [references[factor], *fitted]
        effects = {references[factor]: 0.0, **fitted}
        pairs = []
        for first, second in combinations(levels, 2):
            test = likelihood_ratio(matrix, outcome, fit, _pair_constraint(design, factor, first, second))
            pairs.append((first, second, test))
        adjusted = holm([test.p_value for _, _, test in pairs])
        for (first, second, test), p_holm in zip(pairs, adjusted, strict=True):
            found.append(
                Comparison(
                    factor=factor,
                    first=first,
                    second=second,
                    log_odds_ratio=effects[second] - effects[first],
                    chi2=test.statistic,
                    p_value=test.p_value,
                    p_holm=p_holm,
                    label=significance_label(p_holm),
                )
            )
    return found


def _fit(
    exposures: Sequence[EpisodeRow], spec: ModelSpec
) -> tuple[_Design, Matrix, FirthFit, list[str], dict[str, str]]:
    design, notes, references = _build(exposures, spec)
    outcome = np.array([episode.avoided for episode in exposures], dtype=float)
    fit = firth_fit(design.matrix(), outcome)
    if not fit.converged:
        notes.append("the penalized fit did not converge; estimates and tests are unreliable")
    return design, outcome, fit, notes, references


def model_refusal(episodes: Sequence[EpisodeRow]) -> str | None:
    """Why no model is fitted to these episodes, or None: a handful of exposures, or one operator
    and one type (an intercept alone), gives estimates and tests that say nothing."""
    exposures = [episode for episode in episodes if episode.exposed and episode.pattern_type]
    if len(exposures) < MIN_EXPOSURES:
        return f"too few exposures for a model ({len(exposures)}; it needs at least {MIN_EXPOSURES})"
    if len({e.operator for e in exposures}) < 2 and len({e.pattern_type for e in exposures}) < 2:
        return "no model: one operator and one pattern type leave nothing to compare"
    return None


def fit_model(episodes: Sequence[EpisodeRow], spec: ModelSpec | None = None) -> ModelReport | None:
    """Fit the model on the exposures among `episodes`; None when there are none.

    Pairwise comparisons always come from the main-effects model (with the task factor if asked):
    under an interaction a main effect is only the effect at the reference level. The matrices are
    small, so BLAS runs on one thread: a threaded BLAS spends far longer waking its threads on a
    busy machine than it saves (measured 12x slower with load on 2 cores).
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return _fit_model(episodes, spec)


def _fit_model(episodes: Sequence[EpisodeRow], spec: ModelSpec | None) -> ModelReport | None:
    spec = spec or ModelSpec()
    exposures = [episode for episode in episodes if episode.exposed and episode.pattern_type]
    if not exposures:
        return None
    design, outcome, fit, notes, references = _fit(exposures, spec)
    matrix = design.matrix()
    parameters = matrix.shape[1]
    coefficients = []
    for index, (term, level) in enumerate(zip(design.terms, design.levels, strict=True)):
        test = likelihood_ratio(matrix, outcome, fit, drop_constraint(parameters, [index]))
        estimate = float(fit.coefficients[index])
        coefficients.append(
            Coefficient(
                term=term,
                level=level,
                estimate=estimate,
                odds_ratio=float(np.exp(estimate)),
                chi2=test.statistic,
                p_value=test.p_value,
            )
        )
    terms = []
    for term in dict.fromkeys(name for name in design.terms if name != "(intercept)"):
        test = likelihood_ratio(matrix, outcome, fit, drop_constraint(parameters, design.indices(term)))
        terms.append(TermTest(term=term, df=test.df, chi2=test.statistic, p_value=test.p_value))
    if spec.interaction:
        main = _fit(exposures, spec.model_copy(update={"interaction": False}))
        comparisons = _comparisons(main[0], main[1], main[2], main[4])
        notes.append("pairwise comparisons are from the main-effects model")
    else:
        comparisons = _comparisons(design, outcome, fit, references)
    return ModelReport(
        formula=_formula(design),
        exposures=len(exposures),
        converged=fit.converged,
        references=references,
        coefficients=tuple(coefficients),
        terms=tuple(terms),
        comparisons=tuple(comparisons),
        notes=tuple(notes),
    )
