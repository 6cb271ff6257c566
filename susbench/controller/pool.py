"""The local worker pool: K worker processes behind the `EpisodeExecutor` Protocol.

Each worker has its own Playwright and its own replay server (or its own warm browser container),
while the parent alone writes DuckDB. A worker enforces each episode's time budget itself
(`budget.time_budget`), so an operator that overruns still ends with the extension's verdict
stored. Only a worker that overruns the budget by more than the grace (a browser that hangs, an
operator that ignores the interrupt) is killed and replaced, its episode `error`, so nothing can
stall a run (AgentLab's users' complaint). A distributed executor (Ray) implements the same
Protocol: take jobs, hand back one `EpisodeRecord` per job.

Workers are forked from a forkserver that has imported the worker's modules once, so a pool starts in
milliseconds instead of seconds of imports per worker, and every later pool of the same process
(a study, a test session) reuses it.
"""

from __future__ import annotations

import multiprocessing
import os
import select
import signal
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from multiprocessing.connection import Connection, wait
from typing import Protocol

from susbench.controller.environment import WorkerSetup
from susbench.controller.episode import EpisodeRunner, error_record
from susbench.controller.planning import EpisodeJob
from susbench.controller.stopping import SEATED_STOP, listen_for_seated_stop
from susbench.core.errors import SusbenchError
from susbench.records.episode import EpisodeRecord

SETUP_GRACE_S = 45.0
"""Time for a worker to start, and for an episode's browser start, scoring and clean-up beyond its
operator's budget, before the worker is killed."""
CONTAINER_START_S = 60.0
"""A container worker's start also waits for its container (`ContainerBackend`'s ready timeout)."""
STOP_GRACE_S = 8.0
WORKER_MODULES = ("susbench.controller.episode",)
"""Imported once by the forkserver, before it forks any worker."""


class EpisodeExecutor(Protocol):
    """Runs every job once and reports each finished episode through `on_result` (in the caller's
    process, so only the caller writes the store)."""

    def run(self, jobs: Sequence[EpisodeJob], on_result: Callable[[EpisodeRecord], None]) -> None: ...


ExecutorFactory = Callable[[WorkerSetup, int], AbstractContextManager[EpisodeExecutor]]
"""Opens an executor for a run from the worker environment and the number of episodes at once."""


def _worker_main(conn: Connection, setup_json: str, environment: dict[str, str], run_pid: int) -> None:
    """A worker process: own session (so it can be killed as a group), own Playwright and proxy, and
    the run's environment as it is now (the forkserver kept the one it was started with)."""
    os.setsid()
    _die_with_run(run_pid)
    os.environ.clear()
    os.environ.update(environment)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    signal.signal(signal.SIGINT, _raise_interrupt)
    listen_for_seated_stop()
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
    except SusbenchError as exc:  # the user's to fix (an engine that does not answer, a stale image)
        with suppress(OSError):
            conn.send(("refused", str(exc)))
    except Exception:  # noqa: BLE001 - report a broken worker setup to the parent, then exit
        with suppress(OSError):
            conn.send(("failed", traceback.format_exc(limit=4)))


def _die_with_run(run_pid: int) -> None:
    """SIGTERM this worker when the run's process ends, so a killed run leaves no browsers behind.

    The run is not the worker's parent (the forkserver is, and it outlives the run while any worker
    lives), so the worker watches the run's process itself."""
    try:
        run = os.pidfd_open(run_pid)
    except ProcessLookupError:
        os.kill(os.getpid(), signal.SIGTERM)
        return

    def watch() -> None:
        select.select([run], [], [])
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True, name="susbench-run-watch").start()


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


class LocalProcessPool:
    """K worker processes; the parent hands out jobs, watches deadlines and replaces the dead."""

    def __init__(self, setup: WorkerSetup, size: int) -> None:
        self._setup = setup
        self._size = size
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(list(WORKER_MODULES))
        self._workers: list[_Worker] = []
        self._last_failure = ""
        self._start_grace_s = SETUP_GRACE_S + (CONTAINER_START_S if setup.browser == "container" else 0.0)

    def __enter__(self) -> LocalProcessPool:
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
            args=(child, self._setup.model_dump_json(), dict(os.environ), os.getpid()),
            daemon=True,
            name="susbench-worker",
        )
        process.start()
        child.close()
        return _Worker(process=process, conn=parent, deadline=time.monotonic() + self._start_grace_s)

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

    def run(self, jobs: Sequence[EpisodeJob], on_result: Callable[[EpisodeRecord], None]) -> None:
        """Run every job once; results arrive through `on_result` in completion order. Interrupted
        (Ctrl-C, SIGTERM), it hands out nothing more and lets the running episodes finish and be
        reported before it re-raises (a person's at once: `stopping.SEATED_STOP`); a second interrupt
        abandons them (a resumed run redoes them)."""
        try:
            self._run(jobs, on_result)
        except KeyboardInterrupt:
            for worker in self._workers:
                if worker.job is not None and worker.process.pid is not None:
                    with suppress(ProcessLookupError):
                        os.kill(worker.process.pid, SEATED_STOP)
            self._finish_running(on_result)
            raise

    def _finish_running(self, on_result: Callable[[EpisodeRecord], None]) -> None:
        """Report the episodes already running, each until its deadline; a dead worker's is left undone."""
        running = [worker for worker in self._workers if worker.job is not None]
        while running:
            wait([worker.conn for worker in running], timeout=0.5)
            for worker in list(running):
                record = self._finished(worker)
                if record is not None:
                    worker.job = None
                    on_result(record)
                if worker.job is None or not worker.process.is_alive() or time.monotonic() > worker.deadline:
                    running.remove(worker)

    @staticmethod
    def _finished(worker: _Worker) -> EpisodeRecord | None:
        """The record of the episode the worker reports done, if it just did."""
        try:
            if not worker.conn.poll():
                return None
            kind, payload = worker.conn.recv()
        except (EOFError, OSError):
            return None
        return EpisodeRecord.model_validate_json(payload) if kind == "done" else None

    def _run(self, jobs: Sequence[EpisodeJob], on_result: Callable[[EpisodeRecord], None]) -> None:
        pending = list(reversed(jobs))
        failures = 0
        while pending or any(worker.job is not None for worker in self._workers):
            for worker in self._workers:
                if worker.ready and worker.job is None and pending:
                    assigned = pending.pop()
                    worker.job, worker.started_at = assigned, datetime.now(UTC)
                    worker.deadline = time.monotonic() + assigned.timeout_s + SETUP_GRACE_S
                    worker.conn.send(assigned.model_dump_json())
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
            if kind == "refused":
                raise SusbenchError(f"an episode worker could not start: {payload}")
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
        reason = (
            f"episode overran its {job.timeout_s:g} s budget by over {SETUP_GRACE_S:g} s; worker killed"
            if overran
            else "worker process died"
        )
        return job, error_record(job, started, reason)
