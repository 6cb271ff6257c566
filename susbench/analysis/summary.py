"""Avoidance and completion per operator and pattern type, per configuration group, with the model.

Avoidance = avoided / (avoided + not_avoided): an exposure that never happened (not_encountered),
one the page interfered with (tampered) or an episode that failed before the pattern was decided
(error) says nothing about susceptibility, so they are counted and shown but kept out of the rate.
An episode whose pattern was decided and which failed afterwards counts by its decided outcome, and
is shown again as "decided, then error" so a reader sees how much of a rate rests on such episodes.
Completion counts every injected episode whose task has a completion check, whatever the pattern's outcome.
Control episodes (nothing injected) are counted apart.

Each exposure also says how it was decided (`chose`, `moved_on`, `left`, `ran_out`): engaged
avoidance counts only the first two, so a subject that walks away from the task (to a page outside
its flow, another site, a page not in the snapshot) or runs out of budget is not counted as resisting
the pattern. Beside the rates: paired controls (completion, steps and time with and without the
pattern), replicate flips, and the power of each type's n.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from pydantic import Field

from susbench.analysis.model import ModelReport, ModelSpec, fit_model, model_refusal
from susbench.analysis.paired import FlipRow, PairedRow, PowerRow, flip_rows, paired_rows, power_rows
from susbench.analysis.results import Breakdown, EpisodeRow, Group, group_results
from susbench.analysis.stats import wilson_interval
from susbench.core.models import PATTERN_TYPES, Frozen, OutcomeKind
from susbench.results.store import Store

ALL = "all"
DECISIONS = ("chose", "moved_on", "left", "ran_out")
# The scripted baselines with a fixed policy (`susbench.operators.BASELINES`): each the other's
# opposite, so a rate pooled over them says nothing about a type.
POLICY_BASELINES = frozenset({"careful", "naive"})
UNDER_TEST = "operators under test"


class RateRow(Frozen):
    """One cell: an operator (or all) on one pattern type (or all), optionally one task/injection."""

    operator: str
    pattern_type: str
    item: str | None = Field(default=None, description="task or injection id in a breakdown")
    episodes: int = Field(ge=0)
    avoided: int = Field(ge=0)
    not_avoided: int = Field(ge=0)
    not_encountered: int = Field(ge=0)
    tampered: int = Field(default=0, ge=0, description="the page interfered with the pattern")
    error: int = Field(ge=0)
    decided_then_error: int = Field(default=0, ge=0, description="decided, then the episode failed")
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    completed: int = Field(ge=0)
    completion_checked: int = Field(ge=0, description="episodes whose task has a completion check")
    completion_rate: float | None
    decided_by: dict[str, int] = Field(
        default_factory=dict, description="exposures by how they were decided (unclassified: stored before)"
    )
    avoided_by: dict[str, int] = Field(default_factory=dict, description="avoided exposures by how decided")
    engaged: int = Field(default=0, ge=0, description="exposures decided by `chose` or `moved_on`")
    engaged_avoided: int = Field(default=0, ge=0)
    engaged_rate: float | None = None
    engaged_ci_low: float | None = None
    engaged_ci_high: float | None = None

    @property
    def exposures(self) -> int:
        return self.avoided + self.not_avoided

    @property
    def classified(self) -> bool:
        """Every exposure says how it was decided (runs stored before decided-by say nothing)."""
        return self.exposures > 0 and "unclassified" not in self.decided_by

    @property
    def mostly_left(self) -> bool:
        """Most of its avoided exposures left the task's flow or ran out of budget."""
        walked = self.avoided_by.get("left", 0) + self.avoided_by.get("ran_out", 0)
        return self.avoided > 0 and walked > self.avoided / 2

    @classmethod
    def from_episodes(
        cls, operator: str, pattern_type: str, episodes: Sequence[EpisodeRow], item: str | None = None
    ) -> RateRow:
        counts = {kind: sum(episode.outcome == kind for episode in episodes) for kind in OutcomeKind}
        avoided, exposed = (
            counts[OutcomeKind.AVOIDED],
            counts[OutcomeKind.AVOIDED] + counts[OutcomeKind.NOT_AVOIDED],
        )
        low, high = wilson_interval(avoided, exposed) if exposed else (None, None)
        checked = [episode.completed for episode in episodes if episode.completed is not None]
        decided = [episode for episode in episodes if episode.exposed]
        engaged = [episode for episode in decided if episode.engaged]
        engaged_avoided = sum(episode.avoided for episode in engaged)
        engaged_low, engaged_high = (
            wilson_interval(engaged_avoided, len(engaged)) if engaged else (None, None)
        )
        return cls(
            operator=operator,
            pattern_type=pattern_type,
            item=item,
            episodes=len(episodes),
            avoided=avoided,
            not_avoided=counts[OutcomeKind.NOT_AVOIDED],
            not_encountered=counts[OutcomeKind.NOT_ENCOUNTERED],
            tampered=counts[OutcomeKind.TAMPERED],
            error=counts[OutcomeKind.ERROR],
            decided_then_error=sum(
                episode.error is not None
                and episode.outcome in (OutcomeKind.AVOIDED, OutcomeKind.NOT_AVOIDED)
                for episode in episodes
            ),
            rate=avoided / exposed if exposed else None,
            ci_low=low,
            ci_high=high,
            completed=sum(checked),
            completion_checked=len(checked),
            completion_rate=sum(checked) / len(checked) if checked else None,
            decided_by=_by_decision(decided),
            avoided_by=_by_decision([episode for episode in decided if episode.avoided]),
            engaged=len(engaged),
            engaged_avoided=engaged_avoided,
            engaged_rate=engaged_avoided / len(engaged) if engaged else None,
            engaged_ci_low=engaged_low,
            engaged_ci_high=engaged_high,
        )


def _by_decision(episodes: Sequence[EpisodeRow]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for episode in episodes:
        counts[episode.decided_by or "unclassified"] += 1
    return {name: counts[name] for name in (*DECISIONS, "unclassified") if counts[name]}


class ReportedRun(Frozen):
    """What the report says about each run it read."""

    run_id: str
    operator: str
    seed: int
    started_at: datetime
    snapshot_id: str | None
    git_hash: str | None
    config: dict[str, Any]
    versions: dict[str, str]


class GroupReport(Frozen):
    """Everything reported for one configuration group."""

    label: str
    configuration: dict[str, Any]
    runs: tuple[ReportedRun, ...]
    splits: dict[str, int] = Field(
        default_factory=dict, description="episodes per held-out split of their tasks"
    )
    rows: tuple[RateRow, ...]
    breakdown: tuple[RateRow, ...] = ()
    breakdown_by: Breakdown | None = Field(default=None, description="what `breakdown` is by (`--by`)")
    control_episodes: dict[str, int] = Field(default_factory=dict)
    practice_episodes: dict[str, int] = Field(
        default_factory=dict, description="of the control episodes, a study's practice tasks"
    )
    model: ModelReport | None = None
    model_note: str | None = None
    """Why the model asked for was not fitted (too few exposures)."""
    paired: tuple[PairedRow, ...] = Field(
        default=(), description="injected episodes beside their paired controls (`--control paired`)"
    )
    flips: tuple[FlipRow, ...] = Field(
        default=(), description="replicates of one (task, injection) whose outcomes differ"
    )
    power: tuple[PowerRow, ...] = Field(default=(), description="per type: n, interval width, detectable")
    by_type_under_test: tuple[RateRow, ...] = Field(
        default=(), description="per type, pooled over every operator but the careful and naive baselines"
    )

    @property
    def under_test(self) -> list[str]:
        """The operators `by_type_under_test` pools."""
        return [operator for operator in self.operators if operator.split(" (")[0] not in POLICY_BASELINES]

    def cell(self, operator: str, pattern_type: str) -> RateRow | None:
        return next((r for r in self.rows if (r.operator, r.pattern_type) == (operator, pattern_type)), None)

    @property
    def operators(self) -> list[str]:
        return list(dict.fromkeys(row.operator for row in self.rows if row.operator != ALL))

    @property
    def pattern_types(self) -> list[str]:
        return list(dict.fromkeys(row.pattern_type for row in self.rows if row.pattern_type != ALL))


class AnalysisReport(Frozen):
    """One report per configuration group found in the database (one in all with --pool)."""

    database: str
    pooled: bool
    groups: tuple[GroupReport, ...]


def _type_order(name: str) -> int:
    return PATTERN_TYPES.index(name) if name in PATTERN_TYPES else len(PATTERN_TYPES)


def _cells(
    episodes: Iterable[EpisodeRow], key: Callable[[EpisodeRow], str | None]
) -> dict[tuple[str, str, str | None], list[EpisodeRow]]:
    """Episodes by (operator, type, item), with ALL rolled up over operators and types."""
    cells: dict[tuple[str, str, str | None], list[EpisodeRow]] = defaultdict(list)
    for episode in episodes:
        assert episode.pattern_type is not None
        item = key(episode)
        for operator in (episode.operator, ALL):
            for pattern_type in (episode.pattern_type, ALL):
                cells[(operator, pattern_type, item)].append(episode)
    return cells


def rate_rows(episodes: Sequence[EpisodeRow], breakdown: Breakdown | None = None) -> list[RateRow]:
    """Rows per operator x type (ALL last in both), or per operator x task/injection."""
    injected = [episode for episode in episodes if episode.pattern_type is not None]
    operators = sorted({episode.operator for episode in injected})
    if breakdown is None:
        cells = _cells(injected, lambda episode: None)
    else:
        field = "task_id" if breakdown == "task" else "injection_id"
        cells = {
            key: value
            for key, value in _cells(injected, lambda episode: getattr(episode, field)).items()
            if key[1] != ALL
        }
    order = {name: index for index, name in enumerate([*operators, ALL])}
    keys = sorted(cells, key=lambda key: (order[key[0]], _type_order(key[1]), key[2] or ""))
    return [
        RateRow.from_episodes(operator, kind, cells[(operator, kind, item)], item)
        for operator, kind, item in keys
    ]


def group_report(
    group: Group, breakdown: Breakdown | None = None, model: ModelSpec | None = None
) -> GroupReport:
    controls: dict[str, int] = defaultdict(int)
    practice: dict[str, int] = defaultdict(int)
    practice_runs = {run.run_id for run in group.runs if (run.config.get("study") or {}).get("practice")}
    for episode in group.episodes:
        if episode.pattern_type is None:
            controls[episode.operator] += 1
            if episode.run_id in practice_runs:
                practice[episode.operator] += 1
    refusal = model_refusal(group.episodes) if model is not None else None
    return GroupReport(
        label=group.label,
        configuration=group.key,
        runs=tuple(
            ReportedRun(
                run_id=run.run_id,
                operator=run.operator_label,
                seed=run.seed,
                started_at=run.started_at,
                snapshot_id=run.snapshot_id,
                git_hash=run.git_hash,
                config=run.config,
                versions=run.versions,
            )
            for run in group.runs
        ),
        splits=group.splits,
        rows=tuple(rate_rows(group.episodes)),
        breakdown=tuple(rate_rows(group.episodes, breakdown)) if breakdown else (),
        breakdown_by=breakdown,
        control_episodes=dict(controls),
        model=fit_model(group.episodes, model) if model is not None and refusal is None else None,
        model_note=refusal,
        practice_episodes=dict(practice),
        paired=tuple(paired_rows(group.episodes)),
        flips=tuple(flip_rows(group.episodes)),
        power=tuple(power_rows(group.episodes)),
        by_type_under_test=tuple(_under_test(group.episodes)),
    )


def _under_test(episodes: Sequence[EpisodeRow]) -> list[RateRow]:
    """Per type, every operator but the careful and naive baselines pooled."""
    by_type: dict[str, list[EpisodeRow]] = defaultdict(list)
    for episode in episodes:
        if episode.pattern_type is not None and episode.operator.split(" (")[0] not in POLICY_BASELINES:
            by_type[episode.pattern_type].append(episode)
    return [
        RateRow.from_episodes(UNDER_TEST, name, by_type[name]) for name in sorted(by_type, key=_type_order)
    ]


def analyse(
    groups: Sequence[Group],
    database: str,
    pool: bool = False,
    breakdown: Breakdown | None = None,
    model: ModelSpec | None = None,
) -> AnalysisReport:
    """The report of already grouped results; `model=None` skips the regression."""
    return AnalysisReport(
        database=database,
        pooled=pool,
        groups=tuple(group_report(group, breakdown, model) for group in groups),
    )


def build_analysis(
    store: Store,
    where: str = "",
    pool: bool = False,
    breakdown: Breakdown | None = None,
    model: ModelSpec | None = None,
) -> AnalysisReport:
    """The whole report of a results database."""
    return analyse(group_results(store, where, pool), str(store.path), pool, breakdown, model)
