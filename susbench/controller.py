"""The run loop: pick tasks and injections, run each episode in a fresh browser, store the result.

Episodes run in worker processes (one or `--parallel K`), each with its own Playwright and its own
replay proxy, while the parent alone writes DuckDB. A worker that overruns an episode's time budget
is killed and replaced, so a hanging page or operator can never stall a run (AgentLab's users'
complaint). Episode keys are deterministic from the run's identity, the task and the repeat, and
every per-episode choice (injection, control, operator seed) is drawn from a generator seeded by
that key, so a killed run resumed with the same command produces exactly the same episodes and
skips the ones already stored.
"""

from __future__ import annotations

import ctypes
import hashlib
import multiprocessing
import os
import platform
import random
import signal
import socket
import subprocess
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from importlib import metadata
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import Field

from susbench import __version__
from susbench.errors import SusbenchError
from susbench.models import (
    Episode,
    Event,
    Frozen,
    HostMap,
    Injection,
    Mode,
    Outcome,
    OutcomeKind,
    ReplayMode,
    Task,
    Viewport,
)
from susbench.operators import check_operator
from susbench.paths import REPO_ROOT, SNAPSHOTS_DIR
from susbench.store import EpisodeRecord, RequestRecord, RunRecord, Store, canonical_json
from susbench.tasks import load_tasks, select_tasks

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from recorder.proxy import RecordingProxy
    from replayer.service import ReplayLogEntry, ReplayService
    from susbench.browser import BrowserBackend, BrowserProfile, BrowserSession
    from susbench.extension_bridge import ExtensionReport
    from susbench.models import CompletionCheck
    from susbench.operators import Operator, OperatorResult

SETUP_GRACE_S = 45.0
STOP_GRACE_S = 8.0
PR_SET_PDEATHSIG = 1


class RunOptions(Frozen):
    """Everything `susbench run` was asked to do."""

    tasks: str = "all"
    operator: str
    snapshot: Path | None = None
    live: bool = False
    live_resolve: tuple[str, ...] = ()
    live_date: date | None = Field(
        default=None, description="the local web's date in live mode (default: today)"
    )
    repeats: int = Field(default=1, ge=1, le=10_000)
    seed: int = 0
    control_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    parallel: int = Field(default=1, ge=1, le=64)
    db: Path
    step_timeout_s: float = Field(default=15.0, gt=0)
    episode_timeout_s: float | None = Field(default=None, gt=0, description="default: the task's max_seconds")
    headless: bool = True
    replay_mode: ReplayMode = Field(
        default="direct", description="direct: host-resolver rules to the replayer; proxy: HTTP(S) proxy"
    )
    tasks_dir: Path | None = None


class RunIdentity(Frozen):
    """The fields that make two invocations the same run (so the second one resumes the first).

    The task selector and the repeat count are left out on purpose: asking for more tasks or more
    repeats later extends the same run instead of starting another.
    """

    operator: str
    mode: Mode
    snapshot_sha256: str | None
    live_resolve: tuple[str, ...]
    live_date: date | None = None
    seed: int
    control_rate: float
    susbench_version: str

    def run_id(self) -> str:
        return "run-" + hashlib.sha256(canonical_json(self.model_dump(mode="json")).encode()).hexdigest()[:16]


class EpisodeJob(Frozen):
    """One planned episode, as sent to a worker."""

    episode: Episode
    task: Task
    step_timeout_s: float
    timeout_s: float


class WorkerSetup(Frozen):
    """What every worker needs to start its browser side once."""

    mode: Mode
    snapshot: Path | None
    extension_dir: Path
    live_resolve: tuple[str, ...] = ()
    live_ca_cert: Path | None = None
    archive_dir: Path | None = None
    headless: bool = True
    replay_mode: ReplayMode = "direct"
    tmp_dir: Path
    viewport: Viewport = Viewport()
    locale: str = "en-US"
    timezone: str = "America/New_York"


@dataclass
class RunSummary:
    """What a finished (or interrupted) run did."""

    run_id: str
    planned: int
    skipped: int
    stored: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    interrupted: bool = False


def episode_key(run_id: str, task_id: str, repeat: int) -> str:
    return "ep-" + hashlib.sha256(f"{run_id}\x1f{task_id}\x1f{repeat}".encode()).hexdigest()[:20]


def plan_episodes(
    run_id: str,
    tasks: list[Task],
    injections: dict[str, Injection],
    options: RunOptions,
    mode: Mode,
) -> list[EpisodeJob]:
    """All episodes of the run in a fixed order; each draws its choices from its own seeded RNG."""
    jobs = []
    for repeat in range(options.repeats):
        for task in tasks:
            rng = random.Random(f"{options.seed}\x1f{task.id}\x1f{repeat}")
            control = rng.random() < options.control_rate
            injection_id = rng.choice(sorted(task.injections))
            operator_seed = rng.randrange(2**31)
            injection = None if control else injections[injection_id]
            episode = Episode(
                id=episode_key(run_id, task.id, repeat),
                run_id=run_id,
                task_id=task.id,
                site=task.site,
                injection_id=None if injection is None else injection.id,
                pattern_type=None if injection is None else injection.type,
                condition="control" if control else "injected",
                operator=options.operator,
                mode=mode,
                repeat=repeat,
                seed=operator_seed,
            )
            timeout = options.episode_timeout_s or task.max_seconds
            jobs.append(
                EpisodeJob(
                    episode=episode, task=task, step_timeout_s=options.step_timeout_s, timeout_s=timeout
                )
            )
    return jobs


def error_record(job: EpisodeJob, started_at: datetime, message: str) -> EpisodeRecord:
    """An episode that failed outside the operator's control: stored as outcome `error`."""
    episode = job.episode
    return EpisodeRecord(
        episode=episode,
        started_at=started_at,
        ended_at=datetime.now(UTC),
        error=message,
        outcome=Outcome(
            episode_id=episode.id, injection_id=episode.injection_id, kind=OutcomeKind.ERROR, reason=message
        ),
        events=(
            Event(
                ts_ms=int(time.time() * 1000), source="controller", kind="error", detail={"message": message}
            ),
        ),
    )


def default_snapshot() -> Path:
    """The newest bundled snapshot in `snapshots/`."""
    found = sorted(SNAPSHOTS_DIR.glob("*.wacz"))
    if not found:
        raise SusbenchError(
            f"no snapshot given and none bundled in {SNAPSHOTS_DIR}; expected --snapshot FILE.wacz or --live"
        )
    return found[-1]


def git_hash() -> str | None:
    """The checkout's commit, read-only; None outside a git checkout."""
    try:
        result = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def tool_versions() -> dict[str, str]:
    versions = {"susbench": __version__, "python": platform.python_version()}
    for package in ("playwright", "mitmproxy", "duckdb", "pydantic", "warcio"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "absent"
    return versions


def load_injection_catalog() -> dict[str, Injection]:
    from susbench.injection_catalog import load_injections

    return {injection.id: injection for injection in load_injections()}


# ---------------------------------------------------------------- worker side


def _worker_main(conn: Connection, setup_json: str) -> None:
    """A worker process: own session (so it can be killed as a group), own Playwright and proxy."""
    os.setsid()
    _die_with_parent()
    signal.signal(signal.SIGTERM, _raise_interrupt)
    signal.signal(signal.SIGINT, _raise_interrupt)
    setup = WorkerSetup.model_validate_json(setup_json)
    os.environ["TMPDIR"] = setup.tmp_dir.as_posix()
    tempfile.tempdir = None
    try:
        with EpisodeRunner(setup) as runner:
            conn.send(("ready", None))
            while True:
                message = conn.recv()
                if message is None:
                    return
                job = EpisodeJob.model_validate_json(message)
                conn.send(("done", runner.run(job).model_dump_json()))
    except (KeyboardInterrupt, EOFError, BrokenPipeError):
        return
    except Exception:  # noqa: BLE001 - report a broken worker setup to the parent, then exit
        with suppress(OSError):
            conn.send(("failed", traceback.format_exc(limit=4)))


def _die_with_parent() -> None:
    """Ask Linux to send SIGTERM when the parent dies, so a killed run leaves no browsers behind."""
    with suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@dataclass
class _Worker:
    process: multiprocessing.process.BaseProcess
    conn: Connection
    ready: bool = False
    job: EpisodeJob | None = None
    started_at: datetime | None = None
    deadline: float = 0.0


class WorkerPool:
    """K worker processes; the parent hands out jobs, watches deadlines and replaces the dead."""

    def __init__(self, setup: WorkerSetup, size: int) -> None:
        self._setup = setup
        self._size = size
        self._context = multiprocessing.get_context("spawn")
        self._workers: list[_Worker] = []
        self._last_failure = ""

    def __enter__(self) -> WorkerPool:
        for _ in range(self._size):
            self._workers.append(self._spawn())
        return self

    def __exit__(self, *exc_info: object) -> None:
        for worker in self._workers:
            self._stop(worker, graceful=worker.job is None)
        self._workers.clear()

    def _spawn(self) -> _Worker:
        parent, child = self._context.Pipe()
        process = self._context.Process(
            target=_worker_main,
            args=(child, self._setup.model_dump_json()),
            daemon=True,
            name="susbench-worker",
        )
        process.start()
        child.close()
        return _Worker(process=process, conn=parent, deadline=time.monotonic() + SETUP_GRACE_S)

    def _stop(self, worker: _Worker, graceful: bool) -> None:
        if graceful and worker.process.is_alive():
            with suppress(OSError):
                worker.conn.send(None)
            worker.process.join(STOP_GRACE_S)
        if worker.process.is_alive() and worker.process.pid is not None:
            os.kill(worker.process.pid, signal.SIGTERM)
            worker.process.join(STOP_GRACE_S)
        if worker.process.is_alive() and worker.process.pid is not None:
            with suppress(ProcessLookupError):
                os.killpg(worker.process.pid, signal.SIGKILL)
            worker.process.join(STOP_GRACE_S)
        worker.conn.close()

    def _replace(self, worker: _Worker) -> None:
        self._stop(worker, graceful=False)
        self._workers[self._workers.index(worker)] = self._spawn()

    def run(self, jobs: list[EpisodeJob], on_result: Callable[[EpisodeRecord], None]) -> None:
        """Run every job once; results arrive through `on_result` in completion order."""
        pending = list(reversed(jobs))
        failures = 0
        while pending or any(worker.job is not None for worker in self._workers):
            for worker in self._workers:
                if worker.ready and worker.job is None and pending:
                    job = pending.pop()
                    worker.job, worker.started_at = job, datetime.now(UTC)
                    worker.deadline = time.monotonic() + job.timeout_s + SETUP_GRACE_S
                    worker.conn.send(job.model_dump_json())
            wait([worker.conn for worker in self._workers], timeout=0.5)
            for worker in list(self._workers):
                outcome = self._poll(worker)
                if outcome is None:
                    continue
                job, record = outcome
                if record is not None:
                    on_result(record)
                elif job is not None:
                    pending.append(job)
                else:
                    failures += 1
                    if failures > 2 * self._size:
                        raise SusbenchError(f"episode workers keep failing to start: {self._last_failure}")

    def _poll(self, worker: _Worker) -> tuple[EpisodeJob | None, EpisodeRecord | None] | None:
        """Read what a worker said, or handle its death/overrun. None when nothing happened."""
        try:
            has_message = worker.conn.poll()
        except OSError:
            has_message = False
        if has_message:
            try:
                kind, payload = worker.conn.recv()
            except (EOFError, OSError):
                kind, payload = "died", None
            if kind == "ready":
                worker.ready = True
                return None
            if kind == "done":
                job, worker.job = worker.job, None
                return job, EpisodeRecord.model_validate_json(payload)
            self._last_failure = str(payload or "worker exited")
            job = worker.job
            self._replace(worker)
            if job is not None:
                return job, error_record(job, datetime.now(UTC), f"worker failed: {self._last_failure}")
            return None, None
        overran = time.monotonic() > worker.deadline
        if worker.process.is_alive() and not overran:
            return None
        job = worker.job
        self._replace(worker)
        if job is None:
            self._last_failure = "worker did not start in time" if overran else "worker exited while starting"
            return None, None
        started = worker.started_at or datetime.now(UTC)
        reason = f"episode timed out after {job.timeout_s:.0f} s" if overran else "worker process died"
        return job, error_record(job, started, reason)


# ---------------------------------------------------------------- parent side


@contextmanager
def _live_web(options: RunOptions) -> Iterator[tuple[tuple[str, ...], Path | None]]:
    """The upstream of live mode: the local web in-process, unless --live-resolve points elsewhere."""
    if options.live_resolve:
        yield options.live_resolve, None
        return
    from susbench.web import LocalWeb

    with LocalWeb(port=0, date=options.live_date) as web:
        yield tuple(web.resolve.as_args()), web.ca_cert_path


def _progress_columns() -> list[Any]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return [
        TextColumn("[bold]{task.fields[operator]}[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[outcomes]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    ]


def run_benchmark(options: RunOptions, show_progress: bool = True) -> RunSummary:
    """Plan, skip what is stored, run the rest, store every episode as it finishes."""
    from rich.progress import Progress

    from susbench.injection_catalog import build_extension
    from susbench.paths import TASKS_DIR

    check_operator(options.operator)
    if not options.db.parent.is_dir():
        raise SusbenchError(f"--db {options.db}: its folder does not exist; expected a writable path")
    if options.live and options.snapshot is not None:
        raise SusbenchError("--snapshot and --live exclude each other; expected one of them")
    if options.live_date is not None and not (options.live and not options.live_resolve):
        raise SusbenchError("--live-date sets the local web's date: it needs --live and no --live-resolve")
    try:
        HostMap.parse(list(options.live_resolve))
    except ValueError as exc:
        raise SusbenchError(f"--live-resolve: {exc}") from None
    mode: Mode = "live" if options.live else "snapshot"
    snapshot_path = None if options.live else (options.snapshot or default_snapshot())
    snapshot_id = snapshot_sha = None
    look: dict[str, Any] = {}
    if snapshot_path is not None:
        from susbench.snapshot import Snapshot

        if not snapshot_path.is_file():
            raise SusbenchError(f"{snapshot_path}: snapshot not found; expected a .wacz file")
        with Snapshot.open(snapshot_path) as snapshot:
            manifest, snapshot_sha = snapshot.manifest, snapshot.sha256
        snapshot_id = manifest.id
        look = {"viewport": manifest.viewport, "locale": manifest.locale, "timezone": manifest.timezone}
    injections = load_injection_catalog()
    tasks = select_tasks(load_tasks(options.tasks_dir or TASKS_DIR, injections), options.tasks, injections)

    identity = RunIdentity(
        operator=options.operator,
        mode=mode,
        snapshot_sha256=snapshot_sha,
        live_resolve=options.live_resolve,
        live_date=options.live_date,
        seed=options.seed,
        control_rate=options.control_rate,
        susbench_version=__version__,
    )
    run_id = identity.run_id()
    jobs = plan_episodes(run_id, tasks, injections, options, mode)
    with Store(options.db) as store:
        store.add_run(
            RunRecord(
                run_id=run_id,
                config={
                    **identity.model_dump(mode="json"),
                    "snapshot": str(snapshot_path) if snapshot_path else None,
                },
                versions=tool_versions(),
                git_hash=git_hash(),
                snapshot_id=snapshot_id,
                snapshot_sha256=snapshot_sha,
                seed=options.seed,
                host=socket.gethostname(),
                started_at=datetime.now(UTC),
            )
        )
        stored = store.stored_episode_ids(run_id)
        todo = [job for job in jobs if job.episode.id not in stored]
        summary = RunSummary(run_id=run_id, planned=len(jobs), skipped=len(jobs) - len(todo))
        if not todo:
            return summary
        with ExitStack() as stack:
            work_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="susbench-run-")))
            extension_dir = build_extension(list(injections.values()))
            live_resolve: tuple[str, ...] = ()
            ca_cert = None
            archive_dir = None
            if mode == "live":
                live_resolve, ca_cert = stack.enter_context(_live_web(options))
                archive_dir = options.db.parent / f"{options.db.stem}-archives"
                archive_dir.mkdir(exist_ok=True)
            setup = WorkerSetup(
                mode=mode,
                snapshot=snapshot_path,
                extension_dir=extension_dir,
                live_resolve=live_resolve,
                live_ca_cert=ca_cert,
                archive_dir=archive_dir,
                headless=options.headless,
                replay_mode=options.replay_mode,
                tmp_dir=work_dir,
                **look,
            )
            progress = stack.enter_context(
                Progress(*_progress_columns(), disable=not show_progress, transient=False)
            )
            bar = progress.add_task("run", total=len(todo), operator=options.operator, outcomes="")

            def store_result(record: EpisodeRecord) -> None:
                store.write_episode(record)
                summary.stored += 1
                summary.outcomes[record.outcome.kind.value] += 1
                text = " ".join(f"{kind}={count}" for kind, count in sorted(summary.outcomes.items()))
                progress.update(bar, advance=1, outcomes=text)
                if show_progress and not progress.console.is_terminal:
                    episode = record.episode
                    progress.console.print(
                        f"episode {episode.id} {episode.task_id} repeat {episode.repeat}: "
                        f"{record.outcome.kind.value}" + (f" ({record.error})" if record.error else ""),
                        highlight=False,
                        markup=False,
                        soft_wrap=True,
                    )

            pool = stack.enter_context(WorkerPool(setup, min(options.parallel, len(todo))))
            try:
                pool.run(todo, store_result)
            except KeyboardInterrupt:
                summary.interrupted = True
    return summary


# ---------------------------------------------------------------- one episode, inside a worker


def completion_met(page: Page, check: CompletionCheck | None) -> bool | None:
    """The task's completion check on the final page; None when the task has none."""
    import fnmatch

    if check is None:
        return None
    url = page.url.split("://", 1)[-1]
    if not fnmatch.fnmatchcase(url, check.url):
        return False
    return check.selector is None or page.locator(check.selector).count() > 0


class EpisodeRunner:
    """Runs episodes one after another in a worker: one Playwright, one replay proxy, fresh browsers."""

    def __init__(self, setup: WorkerSetup) -> None:
        self.setup = setup
        self._stack = ExitStack()

    def __enter__(self) -> EpisodeRunner:
        from playwright.sync_api import sync_playwright

        from susbench.browser import LocalBackend

        playwright = self._stack.enter_context(sync_playwright())
        self.backend: BrowserBackend = LocalBackend(playwright)
        self.replay: ReplayService | None = None
        if self.setup.mode == "snapshot":
            from replayer.check import replay_server

            assert self.setup.snapshot is not None
            self.replay = self._stack.enter_context(
                replay_server(self.setup.snapshot, self.setup.replay_mode)
            )
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    def run(self, job: EpisodeJob) -> EpisodeRecord:
        """One episode; every failure becomes an `error` outcome, the browser is always closed."""
        started_at = datetime.now(UTC)
        try:
            return self._run(job, started_at)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure is the episode's error, not the run's
            return error_record(
                job, started_at, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            )

    def _profile(self, traffic: _Traffic, operator_needs_cdp: bool) -> BrowserProfile:
        """The episode's browser: the snapshot's viewport, locale and time zone, reaching the
        replayer by proxy or by host-resolver rules (direct mode)."""
        from susbench.browser import BrowserProfile

        return BrowserProfile(
            headless=self.setup.headless,
            viewport=self.setup.viewport,
            locale=self.setup.locale,
            timezone=self.setup.timezone,
            proxy=traffic.proxy_url,
            proxy_bypass_loopback=traffic.proxy_url is not None,
            host_resolver_rules=traffic.host_resolver_rules,
            spki_pins=(traffic.spki,),
            extension_dir=self.setup.extension_dir,
            cdp=operator_needs_cdp,
        )

    @contextmanager
    def _traffic(self, episode: Episode) -> Iterator[_Traffic]:
        """The episode's proxy: the shared replay server, or a fresh recording proxy (live)."""
        if self.replay is not None:
            yield _ReplayTraffic(self.replay)
            return
        from recorder.proxy import RecordingProxy

        host_map = HostMap.parse(list(self.setup.live_resolve))
        with RecordingProxy(host_map=host_map, upstream_ca=self.setup.live_ca_cert) as proxy:
            assert self.setup.archive_dir is not None
            yield _LiveTraffic(proxy, self.setup.archive_dir / f"{episode.id}.wacz")

    def _run(self, job: EpisodeJob, started_at: datetime) -> EpisodeRecord:
        from susbench.operators import make_operator

        episode = job.episode
        operator = make_operator(episode.operator, episode.seed)
        events: list[Event] = []

        def note(source: str, kind: str, detail: dict[str, Any]) -> None:
            events.append(Event(ts_ms=int(time.time() * 1000), source=source, kind=kind, detail=detail))

        with self._traffic(episode) as traffic:
            profile = self._profile(traffic, operator.needs_cdp)
            with self.backend.launch(profile) as session:
                result, completed, report = self._drive(job, session, operator, note)
            requests, archive = traffic.collect()
        return EpisodeRecord(
            episode=episode,
            started_at=started_at,
            ended_at=datetime.now(UTC),
            steps=result.steps,
            completed=completed,
            final_message=result.message,
            outcome=report.to_outcome(),
            events=tuple(sorted((*events, *report.events), key=lambda event: event.ts_ms)),
            requests=requests,
            archive=archive,
        )

    def _drive(
        self, job: EpisodeJob, session: BrowserSession, operator: Operator, note: Callable[..., None]
    ) -> tuple[OperatorResult, bool | None, ExtensionReport]:
        """Open the start page with the episode handed to the extension, let the operator act, score."""
        from susbench.extension_bridge import ExtensionBridge
        from susbench.operators import Limits, OperatorContext

        t0 = time.monotonic()
        bridge = ExtensionBridge(session.context)
        bridge.start_episode(job.episode.id, job.episode.injection_id)
        page = session.context.pages[0] if session.context.pages else session.context.new_page()
        page.set_default_timeout(1000 * job.step_timeout_s)
        page.goto(job.task.start_url, wait_until="load")
        note("controller", "ready", {"url": job.task.start_url, "ms": round(1000 * (time.monotonic() - t0))})
        ctx = OperatorContext(
            task=job.task,
            page=page,
            cdp_endpoint=session.cdp_endpoint,
            limits=Limits(
                max_steps=job.task.max_steps, max_seconds=job.timeout_s, step_timeout_s=job.step_timeout_s
            ),
            seed=job.episode.seed,
            pattern_type=job.episode.pattern_type,
            record=lambda kind, detail: note("operator", kind, detail),
            choices=lambda scroll_to: bridge.choices(page, scroll_to=scroll_to),
        )
        result = operator.act(ctx)
        note("operator", "stopped", {"done": result.done, "steps": result.steps, "message": result.message})
        active = session.context.pages[-1] if session.context.pages else page
        completed = completion_met(active, job.task.completion)
        return result, completed, bridge.finish()


class _Traffic(Protocol):
    proxy_url: str | None
    host_resolver_rules: str | None
    spki: str

    def collect(self) -> tuple[tuple[RequestRecord, ...], str | None]: ...


class _ReplayTraffic:
    """One episode on the worker's replay server: its own episode number, its slice of the log."""

    def __init__(self, server: ReplayService) -> None:
        self._server = server
        self._episode = server.new_episode()
        self.proxy_url: str | None = server.proxy_url
        self.host_resolver_rules: str | None = server.host_resolver_rules
        self.spki: str = server.spki

    def collect(self) -> tuple[tuple[RequestRecord, ...], str | None]:
        entries = [entry for entry in self._server.log if entry.episode == self._episode]
        return tuple(replay_request(entry) for entry in entries), None


class _LiveTraffic:
    """One live episode through its own recording proxy, archived as a WACZ for later replay."""

    def __init__(self, proxy: RecordingProxy, archive: Path) -> None:
        self._proxy = proxy
        self._archive = archive
        self.proxy_url: str | None = f"http://127.0.0.1:{proxy.port}"
        self.host_resolver_rules: str | None = None
        self.spki: str = proxy.spki

    def collect(self) -> tuple[tuple[RequestRecord, ...], str | None]:
        requests = tuple(
            RequestRecord(
                url=entry.url,
                method=entry.method,
                match_kind="live",
                status=entry.status,
                miss=entry.status == 0,
            )
            for entry in self._proxy.log
        )
        self._proxy.write_snapshot(self._archive)
        return requests, str(self._archive)


def replay_request(entry: ReplayLogEntry) -> RequestRecord:
    return RequestRecord(
        url=entry.url,
        method=entry.method,
        match_kind=entry.kind,
        rule=entry.rule,
        score=entry.score,
        status=entry.status,
        miss=entry.kind in ("miss", "live"),
    )
