"""`reproduce`: re-run a result bundle's runs on a snapshot and check that the deterministic
operators (the scripted baselines) score every episode exactly as stored.

Each stored episode runs again as it was planned: the same task, repeat, injection (or control
condition) and operator seed, under the same run identity, replay mode and time limits. What must
match is what the inputs decide: the outcome, the extension's reason, whether the task completed,
and the failure if there was one. Timings and event timestamps differ by nature and are not
compared. Before anything runs, the snapshot and the other inputs (task catalog, injection
catalog, built extension, package version) are checked against the bundle's digests; a
difference is refused, naming it, unless forced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from pydantic import Field, ValidationError, computed_field

from susbench.controller.identity import BROWSER_FIELDS, INPUT_LABELS, RunIdentity, RunInputs, episode_key
from susbench.controller.options import RunOptions, SnapshotFacts, snapshot_facts
from susbench.controller.planning import EpisodeJob, Planner, episode_job
from susbench.controller.run import QuietObserver, RunObserver, load_materials, run_benchmark
from susbench.core.errors import SusbenchError
from susbench.core.loading import validate_data
from susbench.core.models import Episode, Frozen, Injection, OutcomeKind, Task
from susbench.operators import BASELINES
from susbench.results.bundle import BundleEpisode, BundleRun, ResultManifest, bundle_episodes, read_bundle
from susbench.results.store import RunSettings, Store

ObserverFactory = Callable[[str], AbstractContextManager[RunObserver]]
"""Opens a progress observer for one re-run, given its operator's name."""


class Verdict(Frozen):
    """What a deterministic operator's episode must reproduce, field for field."""

    outcome: OutcomeKind
    reason: str
    completed: bool | None
    error: str | None
    steps: int
    final_message: str


class Mismatch(Frozen):
    """A re-run episode whose verdict differs from the stored one (or that did not run)."""

    episode_id: str = Field(description="the episode's id in the bundle")
    task_id: str
    repeat: int
    expected: Verdict
    got: Verdict | None
    differs: tuple[str, ...] = Field(description="the verdict's fields that differ; empty if it did not run")


class RunCheck(Frozen):
    """One bundle run re-run: how many episodes were re-run and which did not match."""

    run_id: str = Field(description="the run in the bundle")
    rerun_id: str = Field(description="the run in the new database (the same id when no input changed)")
    operator: str
    deterministic: bool = Field(description="a scripted baseline, whose outcomes must match exactly")
    changed_inputs: tuple[str, ...] = Field(description="inputs that differ from the bundle's (--force)")
    episodes: int = Field(ge=0)
    matched: int = Field(ge=0)
    mismatches: tuple[Mismatch, ...]
    interrupted: bool = False


class Reproduction(Frozen):
    """The result of `reproduce`: each run's check, and the runs it could not re-run."""

    bundle: str
    snapshot: str
    db: str
    forced: bool
    runs: tuple[RunCheck, ...]
    skipped: tuple[str, ...] = Field(default=(), description="runs not re-run, each with the reason")

    @computed_field
    @property
    def checked(self) -> int:
        return sum(run.episodes for run in self.runs if run.deterministic)

    @computed_field
    @property
    def matched(self) -> int:
        return sum(run.matched for run in self.runs if run.deterministic)

    @computed_field
    @property
    def reproduced(self) -> bool:
        """Every deterministic outcome matched, and nothing was interrupted."""
        return self.checked == self.matched and not any(run.interrupted for run in self.runs)


def verdict(episode: BundleEpisode) -> Verdict:
    return Verdict.model_validate(episode.model_dump(include=set(Verdict.model_fields)))


def compare_verdicts(
    expected: Sequence[BundleEpisode], got: Mapping[tuple[str, int], Verdict]
) -> tuple[int, list[Mismatch]]:
    """Stored against re-run, paired by task and repeat: how many match, and every one that does not."""
    mismatches = []
    for episode in expected:
        wanted = verdict(episode)
        found = got.get((episode.task_id, episode.repeat))
        if found == wanted:
            continue
        differs = (
            ()
            if found is None
            else tuple(name for name in Verdict.model_fields if getattr(found, name) != getattr(wanted, name))
        )
        mismatches.append(
            Mismatch(
                episode_id=episode.episode_id,
                task_id=episode.task_id,
                repeat=episode.repeat,
                expected=wanted,
                got=found,
                differs=differs,
            )
        )
    return len(expected) - len(mismatches), mismatches


def input_changes(run: BundleRun, snapshot: SnapshotFacts, inputs: RunInputs) -> list[str]:
    """What differs between the run's recorded inputs and the ones here, one sentence each."""
    changes = []
    recorded = run.snapshot
    if recorded is None or recorded.sha256 != snapshot.sha256:
        was = "none recorded" if recorded is None else f"{recorded.id} (sha256 {recorded.sha256})"
        changes.append(
            f"snapshot: the run replayed {was}; {snapshot.path} is {snapshot.id} (sha256 {snapshot.sha256})"
        )
    for name, label in INPUT_LABELS.items():
        if name == "snapshot_sha256" or name in BROWSER_FIELDS:
            continue  # the snapshot is compared above; a container run's image is part of its identity
        then, now = getattr(run.inputs, name), getattr(inputs, name)
        if then != now:
            changes.append(f"{label}: {then or 'not recorded'} in the bundle, {now} here")
    try:
        identity = RunIdentity.model_validate(run.identity())
    except ValidationError:
        changes.append(
            "run identity: the bundle's run records no complete identity (made by an older version)"
        )
        return changes
    if identity.run_id() != run.run_id:
        changes.append(
            f"run identity: the bundle's fields make {identity.run_id()}, not {run.run_id} "
            "(another version's identity, or an edited run.json)"
        )
    return changes


def rerun_options(run: BundleRun, snapshot: Path, db: Path, parallel: int) -> RunOptions:
    """The options that re-run `run` on `snapshot` into `db`, as the run's first invocation ran."""
    settings = run.settings or RunSettings()
    data = {
        "tasks": ",".join(run.tasks),
        "operator": run.operator,
        "snapshot": snapshot,
        "repeats": max(run.repeats, 1),
        "seed": run.seed,
        "control_rate": run.control_rate,
        "parallel": parallel,
        "db": db,
        **settings.model_dump(),
    }
    if run.operator_settings:
        data["operator_settings"] = run.operator_settings
    return validate_data(f"run {run.run_id} of the bundle", data, RunOptions)


def stored_planner(episodes: Sequence[BundleEpisode]) -> Planner:
    """Plans the bundle's episodes as they were stored, under the re-run's run id."""

    def plan(
        run_id: str, tasks: Sequence[Task], injections: Mapping[str, Injection], options: RunOptions
    ) -> list[EpisodeJob]:
        by_id = {task.id: task for task in tasks}
        jobs = []
        for stored in episodes:
            task = by_id[stored.task_id]
            episode = Episode(
                id=episode_key(run_id, task.id, stored.repeat),
                run_id=run_id,
                task_id=task.id,
                site=task.site,
                injection_id=stored.injection_id,
                pattern_type=stored.pattern_type,
                condition=stored.condition,
                operator=options.operator,
                mode=options.mode,
                repeat=stored.repeat,
                seed=stored.seed,
            )
            jobs.append(episode_job(episode, task, options))
        return jobs

    return plan


def rerun_verdicts(db: Path, run_id: str) -> dict[tuple[str, int], Verdict]:
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT e.task_id, e.repeat, o.kind, o.reason, e.completed, e.error, e.steps, e.final_message "
            "FROM episodes e JOIN outcomes o USING (episode_id) WHERE e.run_id = ?",
            [run_id],
        )
    names = list(Verdict.model_fields)
    return {(row[0], row[1]): Verdict.model_validate(dict(zip(names, row[2:], strict=True))) for row in rows}


def _refuse_original(db: Path, manifest: ResultManifest) -> None:
    """Re-running into the database the bundle came from would only read the stored outcomes back."""
    if not db.is_file():
        return
    with Store(db, read_only=True) as store:
        _, rows = store.query("SELECT run_id, started_at FROM runs")
    original = {(run.run_id, run.started_at.replace(tzinfo=None)) for run in manifest.runs}
    if any((run_id, started.replace(tzinfo=None)) in original for run_id, started in rows):
        raise SusbenchError(
            f"--db {db}: holds the bundle's own runs (the database it was exported from); expected a "
            "new file for the re-run"
        )


def reproduce_bundle(
    folder: Path,
    snapshot: Path,
    db: Path,
    force: bool = False,
    run: str | None = None,
    parallel: int = 2,
    observe: ObserverFactory | None = None,
) -> Reproduction:
    """Re-run the bundle's snapshot runs (or one of them) on `snapshot` and check their outcomes."""
    manifest = read_bundle(folder)
    chosen = [manifest.run(run)] if run is not None else list(manifest.runs)
    skipped = [
        f"{item.run_id}: a live run, not replayed from a snapshot" for item in chosen if item.mode == "live"
    ]
    chosen = [item for item in chosen if item.mode != "live"]
    if not chosen:
        raise SusbenchError(
            f"{folder}: no snapshot run to re-run; {'; '.join(skipped) or 'the bundle has no runs'}"
        )
    _refuse_original(db, manifest)
    first = rerun_options(chosen[0], snapshot, db, parallel)
    facts = snapshot_facts(first)
    assert facts is not None, "a snapshot run has snapshot facts"
    inputs = load_materials(first, facts).inputs
    changes = {item.run_id: input_changes(item, facts, inputs) for item in chosen}
    if any(changes.values()) and not force:
        runs_by_change: dict[tuple[str, ...], list[str]] = {}
        for run_id, found in changes.items():
            if found:
                runs_by_change.setdefault(tuple(found), []).append(run_id)
        listed = "; ".join(f"{', '.join(ids)}: {' / '.join(found)}" for found, ids in runs_by_change.items())
        raise SusbenchError(
            f"{folder}: the inputs differ from the bundle's, so its results can't be expected to match: "
            f"{listed}. Use --force to run anyway and report what differs"
        )
    checks = []
    for item in chosen:
        expected = bundle_episodes(folder, item.run_id)
        options = rerun_options(item, snapshot, db, parallel)
        with (observe or (lambda name: nullcontext(QuietObserver())))(item.operator) as observer:
            summary = run_benchmark(options, observer, plan=stored_planner(expected))
        matched, mismatches = compare_verdicts(expected, rerun_verdicts(db, summary.run_id))
        checks.append(
            RunCheck(
                run_id=item.run_id,
                rerun_id=summary.run_id,
                operator=item.operator,
                deterministic=item.operator in BASELINES,
                changed_inputs=tuple(changes[item.run_id]),
                episodes=len(expected),
                matched=matched,
                mismatches=tuple(mismatches),
                interrupted=summary.interrupted,
            )
        )
        if summary.interrupted:
            break
    return Reproduction(
        bundle=str(folder),
        snapshot=str(snapshot),
        db=str(db),
        forced=force,
        runs=tuple(checks),
        skipped=tuple(skipped),
    )
