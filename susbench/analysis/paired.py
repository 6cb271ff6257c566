"""What a study's design adds to its rates: paired controls, replicates and power.

- Paired controls (`susbench run --control paired`): an injected episode and its control share run,
  task and repeat (and so seed and operator). Completion is compared pair by pair (McNemar's exact
  test, Newcombe's interval for the paired difference); steps and time by the mean paired difference
  with a t interval. Pairs where either episode is an `error` are left out.
- Replicates (`--repeats N`, injections not redrawn): the injected episodes of one operator on one
  (task, injection); the flip rate is the share of their pairs whose outcomes differ.
- Power: per pattern type, its exposures n (all operators), the Wilson interval's width and the
  smallest difference from another type of the same n detectable at α 0.05 with 80% power
  (`susbench.analysis.power`).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations

from pydantic import Field
from scipy.stats import t as student_t

from susbench.analysis.power import ALPHA, POWER, detectable_difference
from susbench.analysis.results import EpisodeRow
from susbench.analysis.stats import mcnemar_exact, paired_difference_interval, wilson_interval
from susbench.core.models import PATTERN_TYPES, Frozen, OutcomeKind

ALL = "all"


class MeanDifference(Frozen):
    """Mean with the pattern, without it, and the mean paired difference (with − without), 95% t interval
    (None with fewer than two pairs)."""

    with_pattern: float
    without: float
    difference: float
    ci_low: float | None
    ci_high: float | None


class PairedRow(Frozen):
    """One operator (or all) on one type (or all): injected episodes beside their paired controls."""

    operator: str
    pattern_type: str
    pairs: int = Field(ge=0)
    completion_pairs: int = Field(ge=0, description="pairs whose task has a completion check")
    completed_with: int = Field(ge=0)
    completed_without: int = Field(ge=0)
    only_with: int = Field(ge=0, description="completed with the pattern only")
    only_without: int = Field(ge=0, description="completed without the pattern only")
    completion_difference: float | None = Field(description="with − without, Newcombe's 95% interval")
    completion_ci_low: float | None
    completion_ci_high: float | None
    mcnemar_p: float | None = Field(description="McNemar's exact test over the discordant pairs")
    steps: MeanDifference | None
    seconds: MeanDifference | None


class FlipRow(Frozen):
    """Replicates of one operator on one (task, injection), or all of an operator's (task, injection)s."""

    operator: str
    task_id: str | None
    injection_id: str | None
    replicates: int = Field(ge=0)
    pairs: int = Field(ge=0)
    differing: int = Field(ge=0)
    flip_rate: float | None
    outcomes: dict[str, int] = Field(default_factory=dict)


class PowerRow(Frozen):
    """One pattern type, all operators: what its n can tell apart."""

    pattern_type: str
    exposures: int = Field(ge=0)
    rate: float | None
    interval_width: float | None = Field(description="the 95% Wilson interval's width")
    detectable: float | None = Field(
        description=f"smallest difference from another type of the same n detectable at α {ALPHA} "
        f"with {POWER:.0%} power (None: none is)"
    )


def _mean_difference(pairs: Sequence[tuple[float, float]]) -> MeanDifference | None:
    if not pairs:
        return None
    differences = [first - second for first, second in pairs]
    mean = statistics.fmean(differences)
    low = high = None
    if len(differences) > 1:
        half = (
            student_t.ppf(0.975, len(differences) - 1) * statistics.stdev(differences) / math.sqrt(len(pairs))
        )
        low, high = mean - half, mean + half
    return MeanDifference(
        with_pattern=statistics.fmean(first for first, _ in pairs),
        without=statistics.fmean(second for _, second in pairs),
        difference=mean,
        ci_low=low,
        ci_high=high,
    )


def _paired_row(
    operator: str, pattern_type: str, pairs: Sequence[tuple[EpisodeRow, EpisodeRow]]
) -> PairedRow:
    checked = [
        (a.completed, b.completed) for a, b in pairs if a.completed is not None and b.completed is not None
    ]
    both = sum(a and b for a, b in checked)
    only_with = sum(a and not b for a, b in checked)
    only_without = sum(b and not a for a, b in checked)
    neither = len(checked) - both - only_with - only_without
    estimate, low, high = paired_difference_interval(both, only_with, only_without, neither)
    return PairedRow(
        operator=operator,
        pattern_type=pattern_type,
        pairs=len(pairs),
        completion_pairs=len(checked),
        completed_with=both + only_with,
        completed_without=both + only_without,
        only_with=only_with,
        only_without=only_without,
        completion_difference=estimate if checked else None,
        completion_ci_low=low if checked else None,
        completion_ci_high=high if checked else None,
        mcnemar_p=mcnemar_exact(only_with, only_without) if checked else None,
        steps=_mean_difference([(a.steps, b.steps) for a, b in pairs]),
        seconds=_mean_difference([(a.duration_s, b.duration_s) for a, b in pairs]),
    )


def _type_order(name: str) -> int:
    return PATTERN_TYPES.index(name) if name in PATTERN_TYPES else len(PATTERN_TYPES)


def paired_rows(episodes: Sequence[EpisodeRow]) -> list[PairedRow]:
    """Per operator (then all) and type (then all), the injected episodes that have a paired control."""
    twins: dict[tuple[str, str, int], dict[str, EpisodeRow]] = defaultdict(dict)
    for episode in episodes:
        twins[(episode.run_id, episode.task_id, episode.repeat)][episode.condition] = episode
    cells: dict[tuple[str, str], list[tuple[EpisodeRow, EpisodeRow]]] = defaultdict(list)
    for pair in twins.values():
        injected, control = pair.get("injected"), pair.get("control")
        if injected is None or control is None or OutcomeKind.ERROR in (injected.outcome, control.outcome):
            continue
        assert injected.pattern_type is not None
        for operator in (injected.operator, ALL):
            for pattern_type in (injected.pattern_type, ALL):
                cells[(operator, pattern_type)].append((injected, control))
    operators = sorted({operator for operator, _ in cells} - {ALL})
    order = {name: index for index, name in enumerate([*operators, ALL])}
    keys = sorted(cells, key=lambda key: (order[key[0]], key[1] == ALL, _type_order(key[1])))
    return [_paired_row(operator, kind, cells[(operator, kind)]) for operator, kind in keys]


def _flip_row(
    operator: str, task_id: str | None, injection_id: str | None, sets: list[list[EpisodeRow]]
) -> FlipRow:
    pairs = [pair for replicates in sets for pair in combinations(replicates, 2)]
    differing = sum(a.outcome != b.outcome for a, b in pairs)
    outcomes: dict[str, int] = defaultdict(int)
    for replicates in sets:
        for episode in replicates:
            outcomes[episode.outcome.value] += 1
    return FlipRow(
        operator=operator,
        task_id=task_id,
        injection_id=injection_id,
        replicates=sum(len(replicates) for replicates in sets),
        pairs=len(pairs),
        differing=differing,
        flip_rate=differing / len(pairs) if pairs else None,
        outcomes=dict(outcomes),
    )


def flip_rows(episodes: Sequence[EpisodeRow]) -> list[FlipRow]:
    """Per operator: each (task, injection) run at least twice, then the operator's total (task None)."""
    sets: dict[tuple[str, str, str], list[EpisodeRow]] = defaultdict(list)
    for episode in episodes:
        if episode.injection_id is not None:
            sets[(episode.operator, episode.task_id, episode.injection_id)].append(episode)
    replicated = {key: value for key, value in sets.items() if len(value) > 1}
    rows = []
    for operator in sorted({operator for operator, _, _ in replicated}):
        mine = sorted(key for key in replicated if key[0] == operator)
        rows += [_flip_row(*key, [replicated[key]]) for key in mine]
        rows.append(_flip_row(operator, None, None, [replicated[key] for key in mine]))
    return rows


def power_rows(episodes: Sequence[EpisodeRow], alpha: float = ALPHA, power: float = POWER) -> list[PowerRow]:
    """Per pattern type with injected episodes, all operators pooled."""
    by_type: dict[str, list[EpisodeRow]] = defaultdict(list)
    for episode in episodes:
        if episode.pattern_type is not None:
            by_type[episode.pattern_type].append(episode)
    rows = []
    for name in sorted(by_type, key=_type_order):
        exposed = [episode for episode in by_type[name] if episode.exposed]
        avoided = sum(episode.avoided for episode in exposed)
        rate = avoided / len(exposed) if exposed else None
        low, high = wilson_interval(avoided, len(exposed)) if exposed else (None, None)
        rows.append(
            PowerRow(
                pattern_type=name,
                exposures=len(exposed),
                rate=rate,
                interval_width=None if low is None or high is None else high - low,
                detectable=detectable_difference(len(exposed), 0.5 if rate is None else rate, alpha, power),
            )
        )
    return rows
