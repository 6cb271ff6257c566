"""Live against frozen: pair the episodes of two runs and test whether they measured the same thing.

Episodes pair up by task, injection, operator, repeat and seed (two runs made with the same seed
plan the same episodes). Agreement is the share of pairs with the same outcome. McNemar's exact
test and the paired difference in avoidance (Newcombe's interval) use the pairs exposed on both
sides; a pair exposed on one side only (an anchor that no longer matches, a page that moved) is a
discordant pair of its own kind, and its task is flagged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from pydantic import Field

from susbench.analysis.results import EpisodeRow, RunInfo, load_episodes, load_runs
from susbench.analysis.stats import mcnemar_exact, paired_difference_interval
from susbench.core.errors import SusbenchError
from susbench.core.models import PATTERN_TYPES, Frozen, OutcomeKind
from susbench.results.store import Store

ALL = "all"
PairKey = tuple[str, str | None, str, int, int]


class Side(Frozen):
    run_id: str
    operator: str
    mode: str
    snapshot_id: str | None
    config: dict[str, object]
    episodes: int


class Pair(Frozen):
    """Two episodes of the same plan, one from each run."""

    task_id: str
    injection_id: str | None
    pattern_type: str | None
    operator: str
    repeat: int
    seed: int
    first: OutcomeKind
    second: OutcomeKind
    first_reason: str
    second_reason: str

    @property
    def agree(self) -> bool:
        return self.first == self.second


class TypeComparison(Frozen):
    """Agreement, McNemar and the difference in avoidance over one type's pairs (or all)."""

    pattern_type: str
    pairs: int
    agreement: float | None
    both_exposed: int
    both_avoided: int
    only_first_avoided: int
    only_second_avoided: int
    neither_avoided: int
    exposure_discordant: int = Field(description="exposed on one side only")
    first_rate: float | None
    second_rate: float | None
    difference: float | None = Field(description="second minus first avoidance, on pairs exposed on both")
    ci_low: float | None
    ci_high: float | None
    mcnemar_p: float | None


class FlaggedTask(Frozen):
    task_id: str
    injection_id: str | None
    pattern_type: str | None
    pairs: int
    discordant: int
    changes: tuple[str, ...] = Field(description="first -> second outcome (reason), one per distinct change")


class CompareReport(Frozen):
    database: str
    first: Side
    second: Side
    pairs: int
    unpaired_first: int
    unpaired_second: int
    agreement: float | None
    overall: TypeComparison
    by_type: tuple[TypeComparison, ...]
    discordant: tuple[Pair, ...]
    flagged_tasks: tuple[FlaggedTask, ...]


def resolve_run(runs: dict[str, RunInfo], name: str) -> RunInfo:
    """A run by its id or an unambiguous prefix of it."""
    if name in runs:
        return runs[name]
    found = [run for run_id, run in runs.items() if run_id.startswith(name)]
    if len(found) == 1:
        return found[0]
    known = ", ".join(
        f"{run.run_id} ({run.operator_label}, {run.config.get('mode', '?')})" for run in runs.values()
    )
    problem = "matches several runs" if found else "is not a run in this database"
    raise SusbenchError(f"run {name!r} {problem}; expected one of: {known or 'none stored'}")


def _key(episode: EpisodeRow) -> PairKey:
    return (episode.task_id, episode.injection_id, episode.operator, episode.repeat, episode.seed)


def _side(run: RunInfo, episodes: Sequence[EpisodeRow]) -> Side:
    return Side(
        run_id=run.run_id,
        operator=run.operator_label,
        mode=str(run.config.get("mode", "?")),
        snapshot_id=run.snapshot_id,
        config=run.config,
        episodes=len(episodes),
    )


def compare_pairs(pattern_type: str, pairs: Sequence[Pair]) -> TypeComparison:
    exposed = {OutcomeKind.AVOIDED, OutcomeKind.NOT_AVOIDED}
    both = [pair for pair in pairs if pair.first in exposed and pair.second in exposed]
    cells = defaultdict(int)
    for pair in both:
        cells[(pair.first == OutcomeKind.AVOIDED, pair.second == OutcomeKind.AVOIDED)] += 1
    both_avoided, neither = cells[(True, True)], cells[(False, False)]
    only_first, only_second = cells[(True, False)], cells[(False, True)]
    estimate = low = high = first_rate = second_rate = p_value = None
    if both:
        estimate, low, high = paired_difference_interval(both_avoided, only_second, only_first, neither)
        first_rate = (both_avoided + only_first) / len(both)
        second_rate = (both_avoided + only_second) / len(both)
        p_value = mcnemar_exact(only_first, only_second)
    return TypeComparison(
        pattern_type=pattern_type,
        pairs=len(pairs),
        agreement=sum(pair.agree for pair in pairs) / len(pairs) if pairs else None,
        both_exposed=len(both),
        both_avoided=both_avoided,
        only_first_avoided=only_first,
        only_second_avoided=only_second,
        neither_avoided=neither,
        exposure_discordant=sum((pair.first in exposed) != (pair.second in exposed) for pair in pairs),
        first_rate=first_rate,
        second_rate=second_rate,
        difference=estimate,
        ci_low=low,
        ci_high=high,
        mcnemar_p=p_value,
    )


def _flagged(pairs: Sequence[Pair]) -> list[FlaggedTask]:
    by_task: dict[tuple[str, str | None], list[Pair]] = defaultdict(list)
    for pair in pairs:
        by_task[(pair.task_id, pair.injection_id)].append(pair)
    flagged = []
    for (task_id, injection_id), members in sorted(
        by_task.items(), key=lambda item: (item[0][0], item[0][1] or "")
    ):
        discordant = [pair for pair in members if not pair.agree]
        if not discordant:
            continue
        changes = dict.fromkeys(
            f"{pair.first.value} -> {pair.second.value}"
            + (f" ({pair.second_reason})" if pair.second_reason else "")
            for pair in discordant
        )
        flagged.append(
            FlaggedTask(
                task_id=task_id,
                injection_id=injection_id,
                pattern_type=members[0].pattern_type,
                pairs=len(members),
                discordant=len(discordant),
                changes=tuple(changes),
            )
        )
    return flagged


def compare_runs(store: Store, first_name: str, second_name: str) -> CompareReport:
    runs = load_runs(store)
    first, second = resolve_run(runs, first_name), resolve_run(runs, second_name)
    if first.run_id == second.run_id:
        raise SusbenchError(f"both names give run {first.run_id}; expected two different runs")
    episodes = load_episodes(store, runs, f"run_id IN ('{first.run_id}', '{second.run_id}')")
    left = {_key(e): e for e in episodes if e.run_id == first.run_id}
    right = {_key(e): e for e in episodes if e.run_id == second.run_id}
    pairs = [
        Pair(
            task_id=a.task_id,
            injection_id=a.injection_id,
            pattern_type=a.pattern_type,
            operator=a.operator,
            repeat=a.repeat,
            seed=a.seed,
            first=a.outcome,
            second=b.outcome,
            first_reason=a.reason,
            second_reason=b.reason,
        )
        for key, a in sorted(left.items(), key=lambda item: str(item[0]))
        if (b := right.get(key)) is not None
    ]
    if not pairs:
        raise SusbenchError(
            f"runs {first.run_id} and {second.run_id} share no episode (same task, injection, operator, "
            "repeat and seed); expected two runs of one operator with the same --seed"
        )
    types = [name for name in PATTERN_TYPES if any(pair.pattern_type == name for pair in pairs)]
    overall = compare_pairs(ALL, pairs)
    return CompareReport(
        database=str(store.path),
        first=_side(first, list(left.values())),
        second=_side(second, list(right.values())),
        pairs=len(pairs),
        unpaired_first=len(left) - len(pairs),
        unpaired_second=len(right) - len(pairs),
        agreement=overall.agreement,
        overall=overall,
        by_type=tuple(compare_pairs(name, [p for p in pairs if p.pattern_type == name]) for name in types),
        discordant=tuple(pair for pair in pairs if not pair.agree),
        flagged_tasks=tuple(_flagged(pairs)),
    )
