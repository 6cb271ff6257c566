"""`reproduce`: re-run a result bundle's runs on a snapshot and check that the deterministic
operators (the scripted baselines) score every episode exactly as stored.

Each stored episode runs again as it was planned: the same task, repeat, injection (or control
condition) and operator seed, under the same run identity (a container run in the same browser
image), replay mode and time limits. What must match is what the inputs decide: the outcome, the
extension's reason, whether the task completed, and the failure if there was one. Timings and
event timestamps differ by nature and are not compared. Before anything runs, the snapshot and the
other inputs (task catalog, injection catalog, built extension, package version, the browser
image's Chromium) are checked against the bundle's; a difference is refused, naming it, unless
forced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from pydantic import Field, computed_field

from susbench.controller.identity import episode_key
from susbench.controller.options import RunOptions, SnapshotFacts, browser_facts, snapshot_facts
from susbench.controller.planning import EpisodeJob, Planner, episode_job
from susbench.controller.run import QuietObserver, RunObserver, load_materials, run_benchmark, run_identity
from susbench.core.errors import SusbenchError
from susbench.core.identity import ASKED, INPUT_LABELS, RunIdentity
from susbench.core.loading import validate_data
from susbench.core.models import Episode, Frozen, Injection, Task
from susbench.operators import BASELINES
from susbench.records.run import RunSettings
from susbench.results.bundle import (
    BundleEpisode,
    BundleRun,
    ResultManifest,
    Verdict,
    bundle_episodes,
    read_bundle,
    verdict_of,
)
from susbench.results.store import Store

ObserverFactory = Callable[[str], AbstractContextManager[RunObserver]]
"""Opens a progress observer for one re-run, given its operator's name."""


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


def compare_verdicts(
    expected: Sequence[BundleEpisode], got: Mapping[tuple[str, int, str], Verdict]
) -> tuple[int, list[Mismatch]]:
    """Stored against re-run, paired by task, repeat and condition (a paired control is its injected
    episode's twin): how many match, and every one that does not."""
    mismatches = []
    for episode in expected:
        wanted = episode.verdict
        found = got.get((episode.task_id, episode.repeat, episode.condition))
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


def unrunnable(run: BundleRun) -> str | None:
    """Why the bundle's run cannot be re-run as it ran; None when it can."""
    if run.identity is None:
        return "stored before run identities held input digests, so what it ran on is unknown"
    if run.identity.mode == "live":
        return "a live run, not replayed from a snapshot"
    return None


def stored_identity(run: BundleRun) -> RunIdentity:
    if run.identity is None:
        raise SusbenchError(f"run {run.run_id} of the bundle: {unrunnable(run)}")
    return run.identity


def input_changes(run: BundleRun, snapshot: SnapshotFacts, here: RunIdentity) -> list[str]:
    """What differs between the run's recorded inputs and the re-run's (`here`), one sentence each."""
    changes = []
    recorded = run.snapshot
    if recorded is None or recorded.sha256 != snapshot.sha256:
        was = "none recorded" if recorded is None else f"{recorded.id} (sha256 {recorded.sha256})"
        changes.append(
            f"snapshot: the run replayed {was}; {snapshot.path} is {snapshot.id} (sha256 {snapshot.sha256})"
        )
    identity = stored_identity(run)
    for name, label in INPUT_LABELS.items():
        if name == "snapshot_sha256":
            continue  # compared above, with the snapshots' ids
        then, now = getattr(identity, name), getattr(here, name)
        if then != now:
            changes.append(f"{label}: {then or 'not recorded'} in the bundle, {now} here")
    if identity.run_id() != run.run_id:
        changes.append(
            f"run identity: the bundle's fields make {identity.run_id()}, not {run.run_id} "
            "(another version's identity, or an edited run.json)"
        )
    return changes


def rerun_options(run: BundleRun, snapshot: Path, db: Path, parallel: int) -> RunOptions:
    """The options that re-run `run` on `snapshot` into `db`, as the run's first invocation ran:
    everything its identity says was asked (the browser and image too), its tasks, repeats and
    settings. Its mode is the snapshot's, so only snapshot runs are re-run."""
    settings = run.settings or RunSettings()
    data = {
        **stored_identity(run).model_dump(include=set(ASKED) - {"mode"}),
        "tasks": ",".join(run.tasks),
        "snapshot": snapshot,
        "repeats": max(run.repeats, 1),
        "parallel": parallel,
        "db": db,
        **settings.model_dump(),
    }
    return validate_data(f"run {run.run_id} of the bundle", data, RunOptions)


def stored_planner(episodes: Sequence[BundleEpisode]) -> Planner:
    """Plans the bundle's episodes as they were stored, under the re-run's run id."""

    def plan(
        run_id: str, tasks: Sequence[Task], injections: Mapping[str, Injection], options: RunOptions
    ) -> list[EpisodeJob]:
        by_id = {task.id: task for task in tasks}
        injected = {(stored.task_id, stored.repeat) for stored in episodes if stored.condition == "injected"}
        jobs = []
        for stored in episodes:
            task = by_id[stored.task_id]
            paired = stored.condition == "control" and (stored.task_id, stored.repeat) in injected
            episode = Episode(
                id=episode_key(run_id, task.id, stored.repeat, paired_control=paired),
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


def rerun_verdicts(db: Path, run_id: str) -> dict[tuple[str, int, str], Verdict]:
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT e.task_id, e.repeat, e.condition, o.kind, o.reason, e.completed, e.error, e.steps, "
            "e.final_message FROM episodes e JOIN outcomes o USING (episode_id) WHERE e.run_id = ?",
            [run_id],
        )
    return {(row[0], row[1], row[2]): verdict_of(row[3:]) for row in rows}


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
    skipped = [f"{item.run_id}: {why}" for item in chosen if (why := unrunnable(item)) is not None]
    chosen = [item for item in chosen if unrunnable(item) is None]
    if not chosen:
        raise SusbenchError(
            f"{folder}: no snapshot run to re-run; {'; '.join(skipped) or 'the bundle has no runs'}"
        )
    _refuse_original(db, manifest)
    options = {item.run_id: rerun_options(item, snapshot, db, parallel) for item in chosen}
    first = options[chosen[0].run_id]
    facts = snapshot_facts(first)
    assert facts is not None, "a snapshot run has snapshot facts"
    inputs = load_materials(first, facts).inputs
    changes: dict[str, list[str]] = {}
    for item in chosen:
        asked = options[item.run_id]
        changes[item.run_id] = input_changes(item, facts, run_identity(asked, inputs, browser_facts(asked)))
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
        operator = stored_identity(item).operator
        with (observe or (lambda name: nullcontext(QuietObserver())))(operator) as observer:
            summary = run_benchmark(options[item.run_id], observer, plan=stored_planner(expected))
        matched, mismatches = compare_verdicts(expected, rerun_verdicts(db, summary.run_id))
        checks.append(
            RunCheck(
                run_id=item.run_id,
                rerun_id=summary.run_id,
                operator=operator,
                deterministic=operator in BASELINES,
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
