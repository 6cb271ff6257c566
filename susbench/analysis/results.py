"""Stored results as typed rows, grouped by run configuration so that unlike runs are never pooled.

A run's `config` (the `runs` table) records what it ran against: mode, snapshot digest, catalog and
package versions, live upstream, and the browser (local, or a container image and its Chromium).
Runs whose configuration agrees, apart from who operated and how episodes were seeded, form one
group; operators are compared inside a group and groups are reported side by side. `pool=True`
puts everything in one group, saying so in its label.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from susbench.core.digests import canonical_json
from susbench.core.errors import SusbenchError
from susbench.core.identity import BROWSER_FIELDS, RunIdentity
from susbench.core.models import Condition, Frozen, OutcomeKind, Split, SplitChoice, task_split
from susbench.records.episode import DecidedBy

if TYPE_CHECKING:  # DuckDB is not loaded for `report --help` (it reads Breakdown)
    from susbench.results.store import Store

# What a report breaks avoidance down by besides the type (`--by`).
Breakdown = Literal["task", "injection"]

# Config fields that say who operated (an agent's settings too: its model, server, budgets), or how a
# run was seeded (a study's participant among them): compared or replicated inside a group, never a
# reason to split one.
WITHIN_GROUP_FIELDS = frozenset(
    {
        "operator",
        "operator_settings",
        "seed",
        "control_rate",
        "snapshot",
        "image_id",
        "study",
        "redraw_injections",
        "split",
    }
)
# Config fields added after runs were first stored, with the value those older runs had (a local browser).
ADDED_LATER = {name: RunIdentity.model_fields[name].default for name in (*BROWSER_FIELDS, "split")}
# How an exposure was decided when the subject engaged with the task (`engaged avoidance` counts these).
ENGAGED = frozenset({"chose", "moved_on"})
# Config fields that are part of an operator's identity (agents: which model, what it observes).
OPERATOR_FIELDS = ("model", "observation")

EPISODES_SQL = """
SELECT o.run_id, o.episode_id, o.task_id, o.site, o.injection_id, o.pattern_type, o.operator, o.mode,
       o.repeat, e.seed, o.outcome, {scored}, o.completed, o.duration_s, e.archive, e.error, e.condition,
       e.steps
FROM (SELECT * FROM episode_outcomes {where}) o JOIN episodes e USING (episode_id)
     JOIN outcomes r USING (episode_id)
ORDER BY o.run_id, o.task_id, o.repeat, o.episode_id
"""
# The scoring's columns of `episode_outcomes`; a database last written before they existed (opened
# read-only, so its views are as they were) has the run's reason and no decided-by.
SCORED = "o.reason, o.decided_by"
SCORED_BEFORE = "r.reason, NULL"


class RunInfo(Frozen):
    """One row of the `runs` table."""

    run_id: str
    config: dict[str, Any]
    versions: dict[str, str]
    git_hash: str | None
    snapshot_id: str | None
    snapshot_sha256: str | None
    seed: int
    started_at: datetime

    @property
    def operator_label(self) -> str:
        """The operator with its model and observation when the run recorded them."""
        settings = self.config.get("operator_settings") or {}
        chosen = {**(settings.get("config") or {}), **settings, **self.config}
        extras = [str(chosen[name]) for name in OPERATOR_FIELDS if chosen.get(name)]
        name = str(self.config.get("operator", "?"))
        return f"{name} ({', '.join(extras)})" if extras else name

    @property
    def group_key(self) -> str:
        """Canonical JSON of the configuration fields that must agree for runs to be pooled."""
        fields = {
            key: value
            for key, value in {**ADDED_LATER, **self.config}.items()
            if key not in WITHIN_GROUP_FIELDS and key not in OPERATOR_FIELDS
        }
        return canonical_json(fields)


class EpisodeRow(Frozen):
    """One stored episode with its outcome; `operator` is the run's operator label."""

    run_id: str
    episode_id: str
    task_id: str
    site: str
    injection_id: str | None
    pattern_type: str | None
    operator: str
    mode: str
    repeat: int
    seed: int
    outcome: OutcomeKind
    reason: str
    completed: bool | None
    duration_s: float
    archive: str | None
    error: str | None
    condition: Condition = "injected"
    steps: int = 0
    decided_by: DecidedBy | None = None

    @property
    def engaged(self) -> bool:
        """Decided by engaging with the task: the subject chose on the pattern or went on along the flow."""
        return self.exposed and self.decided_by in ENGAGED

    @property
    def exposed(self) -> bool:
        """The pattern was shown and decided: the only episodes that measure susceptibility."""
        return self.outcome in (OutcomeKind.AVOIDED, OutcomeKind.NOT_AVOIDED)

    @property
    def avoided(self) -> bool:
        return self.outcome == OutcomeKind.AVOIDED

    @property
    def split(self) -> Split:
        """Its task's held-out split: the rule decides it from the task id alone, so stored runs have one."""
        return task_split(self.task_id)


class Group(Frozen):
    """Runs that share one configuration, and their episodes."""

    key: dict[str, Any]
    label: str
    runs: tuple[RunInfo, ...]
    episodes: tuple[EpisodeRow, ...]

    @property
    def operators(self) -> list[str]:
        return sorted({episode.operator for episode in self.episodes})

    @property
    def splits(self) -> dict[str, int]:
        """Episodes per held-out split of their tasks."""
        counts: dict[str, int] = defaultdict(int)
        for episode in self.episodes:
            counts[episode.split] += 1
        return dict(sorted(counts.items()))


def load_runs(store: Store) -> dict[str, RunInfo]:
    _, rows = store.query(
        "SELECT run_id, config, versions, git_hash, snapshot_id, snapshot_sha256, seed, started_at FROM runs"
    )
    runs = {}
    for run_id, config, versions, git_hash, snapshot_id, snapshot_sha256, seed, started_at in rows:
        runs[run_id] = RunInfo(
            run_id=run_id,
            config=json.loads(config),
            versions=json.loads(versions),
            git_hash=git_hash,
            snapshot_id=snapshot_id,
            snapshot_sha256=snapshot_sha256,
            seed=seed,
            started_at=started_at,
        )
    return runs


def load_episodes(store: Store, runs: dict[str, RunInfo], where: str = "") -> list[EpisodeRow]:
    """Every stored episode (optionally filtered by SQL over `episode_outcomes`)."""
    columns, _ = store.query("SELECT * FROM episode_outcomes LIMIT 0")
    scored = SCORED if "decided_by" in columns else SCORED_BEFORE
    _, rows = store.query(EPISODES_SQL.format(where=f"WHERE {where}" if where else "", scored=scored))
    episodes = []
    for row in rows:
        (run_id, episode_id, task_id, site, injection_id, pattern_type, operator, mode, repeat, seed) = row[
            :10
        ]
        outcome, reason, decided_by, completed, duration_s, archive, error, condition, steps = row[10:]
        run = runs.get(run_id)
        episodes.append(
            EpisodeRow(
                run_id=run_id,
                episode_id=episode_id,
                task_id=task_id,
                site=site,
                injection_id=injection_id,
                pattern_type=pattern_type,
                operator=run.operator_label if run else operator,
                mode=mode,
                repeat=repeat,
                seed=seed,
                outcome=OutcomeKind(outcome),
                reason=reason,
                completed=completed,
                duration_s=duration_s,
                archive=archive,
                error=error,
                condition=condition,
                steps=steps,
                decided_by=decided_by,
            )
        )
    return episodes


def describe(key: dict[str, Any], runs: Iterable[RunInfo]) -> str:
    """A one-line label: the mode (a snapshot named by its id), package version, then what else differs."""
    runs = list(runs)
    parts = [str(key.get("mode", "?"))]
    snapshot_ids = sorted({run.snapshot_id for run in runs if run.snapshot_id})
    if key.get("snapshot_sha256"):
        parts[0] = f"snapshot {', '.join(snapshot_ids) or '?'} (sha256 {str(key['snapshot_sha256'])[:12]})"
    if key.get("live_resolve"):
        parts.append(f"upstream {', '.join(key['live_resolve'])}")
    if key.get("live_date"):
        parts.append(f"live date {key['live_date']}")
    if key.get("browser") == "container":
        parts.append(f"container {key.get('image')} (Chromium {key.get('image_chromium') or '?'})")
    if key.get("susbench_version"):
        parts.append(f"susbench {key['susbench_version']}")
    seeds = sorted({run.seed for run in runs})
    parts.append("seed " + ", ".join(str(seed) for seed in seeds))
    return " · ".join(parts)


def split_label(splits: dict[str, int]) -> str:
    """`tasks of split test`, or `tasks of splits dev + test` when a group holds both."""
    names = sorted(splits)
    return f"tasks of split{'s' * (len(names) > 1)} {' + '.join(names)}"


def group_results(
    store: Store, where: str = "", pool: bool = False, split: SplitChoice = "all"
) -> list[Group]:
    """Episodes grouped by their runs' configuration (one group of everything with `pool`); only
    those whose task is in `split`, unless it is `all`. A run's split is no reason to part groups:
    the episodes of a test-split run and the test tasks' episodes of a whole run are alike."""
    runs = load_runs(store)
    episodes = [episode for episode in load_episodes(store, runs, where) if split in ("all", episode.split)]
    by_key: dict[str, list[EpisodeRow]] = defaultdict(list)
    for episode in episodes:
        run = runs.get(episode.run_id)
        if run is None:
            raise SusbenchError(
                f"{store.path}: episode {episode.episode_id} names run {episode.run_id}, not in `runs`"
            )
        by_key["pooled" if pool else run.group_key].append(episode)
    groups = []
    for key, members in sorted(by_key.items()):
        group_runs = tuple(runs[run_id] for run_id in sorted({episode.run_id for episode in members}))
        config = {"pooled": True} if pool else json.loads(key)
        label = describe(config, group_runs)
        if pool:
            modes = sorted({episode.mode for episode in members})
            label = f"POOLED over {len(group_runs)} runs ({', '.join(modes)})"
        group = Group(key=config, label=label, runs=group_runs, episodes=tuple(members))
        groups.append(group.model_copy(update={"label": f"{label} · {split_label(group.splits)}"}))
    return groups
