"""Orchestration of a run: check the options, pin the run's identity, plan, skip what is stored, run
the rest on an executor, and store every episode as it finishes (only this process writes DuckDB).

Progress is reported through a `RunObserver`; the command line draws it, the library prints nothing.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from susbench import __version__
from susbench.catalog.injections import build_extension, catalog_sha256, load_injections, load_templates
from susbench.catalog.tasks import load_tasks, select_tasks
from susbench.controller.environment import WorkerSetup
from susbench.controller.identity import resume_notice, task_catalog_sha256
from susbench.controller.journal import run_record
from susbench.controller.options import (
    BrowserFacts,
    RunOptions,
    SnapshotFacts,
    browser_facts,
    check_options,
    snapshot_facts,
)
from susbench.controller.planning import Planner, plan_episodes
from susbench.controller.pool import ExecutorFactory, LocalProcessPool
from susbench.controller.stopping import stop_signal
from susbench.controller.traffic import live_upstream
from susbench.core.digests import tree_sha256
from susbench.core.identity import ASKED, RunIdentity, RunInputs
from susbench.core.models import Injection, OutcomeKind, PageLook, Task
from susbench.core.paths import INJECTIONS_DIR, TASKS_DIR
from susbench.records.episode import EpisodeRecord
from susbench.records.run import RunSettings
from susbench.results.store import Store, archive_folder, trace_folder
from susbench.web.edition import DEFAULT_DATE


@dataclass
class RunSummary:
    """What a finished (or interrupted) run did."""

    run_id: str
    planned: int
    skipped: int
    stored: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    interrupted: bool = False
    stop_signal: int | None = None
    """SIGINT or SIGTERM, when one interrupted the run."""
    notice: str | None = None
    retried: int = 0
    """Episodes stored as `error` by an earlier attempt, run again."""

    @property
    def failed(self) -> bool:
        """Every episode this run stored is an `error`: the operator never worked (a model server
        unreachable, a bad key), which must not pass for a finished run."""
        return self.stored > 0 and self.outcomes[OutcomeKind.ERROR.value] == self.stored


class RunObserver(Protocol):
    """Told when the run's plan is known and after each stored episode (e.g. a progress bar)."""

    def started(self, summary: RunSummary) -> None: ...

    def stored(self, record: EpisodeRecord, summary: RunSummary) -> None: ...


class QuietObserver:
    """Reports nothing (library use, tests, benchmarks)."""

    def started(self, summary: RunSummary) -> None:
        return None

    def stored(self, record: EpisodeRecord, summary: RunSummary) -> None:
        return None


@dataclass(frozen=True)
class RunMaterials:
    """The catalogs and the built extension a run uses, and their digests."""

    tasks: list[Task]
    injections: dict[str, Injection]
    extension_dir: Path
    inputs: RunInputs


def load_materials(options: RunOptions, snapshot: SnapshotFacts | None) -> RunMaterials:
    """Load and check the catalogs, build the extension (content-addressed, so usually reused) and
    take the digests that make up the run's identity."""
    catalogs = (INJECTIONS_DIR, *options.extra_injections) if options.extra_injections else ()
    injections = {injection.id: injection for injection in load_injections(catalogs)}
    templates = load_templates()
    tasks = load_tasks(options.tasks_dir or TASKS_DIR, injections)
    extension_dir = build_extension(injections.values(), templates=templates)
    inputs = RunInputs(
        snapshot_sha256=None if snapshot is None else snapshot.sha256,
        task_catalog_sha256=task_catalog_sha256(tasks),
        injection_catalog_sha256=catalog_sha256(injections.values(), templates),
        extension_sha256=tree_sha256(extension_dir),
        susbench_version=__version__,
    )
    return RunMaterials(tasks=tasks, injections=injections, extension_dir=extension_dir, inputs=inputs)


def unlisted_notice(extra_injections: Sequence[Path], tasks: Sequence[Task]) -> str | None:
    """An injection of an `--injections` folder is drawn only by a task that lists it: name the ones
    no selected task lists, which this run will never show."""
    if not extra_injections:
        return None
    listed = {injection for task in tasks for injection in task.injections}
    unlisted = sorted({item.id for item in load_injections(tuple(extra_injections))} - listed)
    if not unlisted:
        return None
    return f"--injections: no selected task lists {', '.join(unlisted)}, so this run never draws them"


def served_date(options: RunOptions) -> RunOptions:
    """A live run on the local web serves one date: the documented default unless --live-date names
    another. It is pinned before the run's identity, so the journal and the report say which day was
    served."""
    if options.live and not options.live_resolve and options.live_date is None:
        return options.model_copy(update={"live_date": DEFAULT_DATE})
    return options


def run_identity(options: RunOptions, inputs: RunInputs, browser: BrowserFacts | None = None) -> RunIdentity:
    """What was asked (each of the identity's asked fields, read from the options; the browser and
    image as resolved), plus the digests of the inputs and the browser image's Chromium."""
    browser = browser or BrowserFacts()
    return RunIdentity.model_validate(
        {
            **{name: getattr(options, name) for name in ASKED},
            "operator_settings": options.operator_settings.model_dump(mode="json", exclude_defaults=True),
            "browser": browser.kind,
            "image": browser.image,
            "image_chromium": browser.chromium,
            **inputs.model_dump(),
        }
    )


def run_settings(options: RunOptions) -> RunSettings:
    """How the episodes are run, beside the identity: stored with the run so it can be repeated."""
    return RunSettings(
        replay_mode=options.replay_mode,
        step_timeout_s=options.step_timeout_s,
        episode_timeout_s=options.episode_timeout_s,
        headless=options.headless,
    )


def run_benchmark(
    options: RunOptions,
    observer: RunObserver | None = None,
    executor: ExecutorFactory = LocalProcessPool,
    plan: Planner = plan_episodes,
) -> RunSummary:
    """Plan, skip what is stored, run the rest, store every episode as it finishes.

    `plan` is the controller's seeded planning unless a caller re-runs episodes already planned
    (`reproduce` runs a bundle's stored episodes as they were)."""
    observer = observer or QuietObserver()
    checked = check_options(options)
    options = served_date(options)
    snapshot = snapshot_facts(options)
    browser = browser_facts(options)
    materials = load_materials(options, snapshot)
    tasks = select_tasks(materials.tasks, options.tasks, materials.injections)
    identity = run_identity(options, materials.inputs, browser)
    jobs = plan(identity.run_id(), tasks, materials.injections, options)
    with Store(options.db) as store:
        notices = [checked.notice, unlisted_notice(options.extra_injections, tasks)]
        notices.append(resume_notice(identity, store.stored_runs()))
        store.add_run(run_record(identity, snapshot, browser, run_settings(options)))
        settled = store.settled_episode_ids(identity.run_id())
        retried = len(store.stored_episode_ids(identity.run_id()) - settled)
        todo = [job for job in jobs if job.episode.id not in settled]
        if retried:
            notices.append(f"retrying {retried} episode{'s' * (retried != 1)} stored as error")
        summary = RunSummary(
            run_id=identity.run_id(),
            planned=len(jobs),
            skipped=len(jobs) - len(todo),
            notice="\n".join(notice for notice in notices if notice) or None,
            retried=retried,
        )
        observer.started(summary)
        if todo:
            with ExitStack() as stack:
                setup = _worker_setup(options, snapshot, browser, materials, stack)
                pool = stack.enter_context(executor(setup, min(options.parallel, len(todo))))
                try:
                    pool.run(todo, _storing(store, summary, observer))
                except KeyboardInterrupt as exc:
                    summary.interrupted, summary.stop_signal = True, stop_signal(exc)
    return summary


def _worker_setup(
    options: RunOptions,
    snapshot: SnapshotFacts | None,
    browser: BrowserFacts,
    materials: RunMaterials,
    stack: ExitStack,
) -> WorkerSetup:
    """The workers' environment; in live mode the upstream (local web) runs until `stack` closes."""
    live_resolve: tuple[str, ...] = ()
    ca_cert = archive_dir = None
    if options.live:
        live_resolve, ca_cert = stack.enter_context(live_upstream(options))
        archive_dir = archive_folder(options.db)
        archive_dir.mkdir(exist_ok=True)
    return WorkerSetup(
        mode=options.mode,
        snapshot=None if snapshot is None else snapshot.path,
        snapshot_sha256=materials.inputs.snapshot_sha256,
        extension_dir=materials.extension_dir,
        extension_sha256=materials.inputs.extension_sha256,
        live_resolve=live_resolve,
        live_ca_cert=ca_cert,
        archive_dir=archive_dir,
        headless=options.headless,
        replay_mode=options.replay_mode,
        tmp_dir=Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="susbench-run-"))),
        look=PageLook() if snapshot is None else snapshot.look,
        operator_settings=options.operator_settings,
        trace_dir=trace_folder(options.db),
        browser=browser.kind,
        image=browser.image,
    )


def _storing(store: Store, summary: RunSummary, observer: RunObserver) -> Callable[[EpisodeRecord], None]:
    def store_result(record: EpisodeRecord) -> None:
        store.write_episode(record)
        summary.stored += 1
        summary.outcomes[record.outcome.kind.value] += 1
        observer.stored(record, summary)

    return store_result
