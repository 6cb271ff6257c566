"""The Ray executor: a run's episodes as Ray tasks that each need one `browser` of a node, behind the
controller's `EpisodeExecutor` Protocol.

The driver keeps as many tasks in flight as the cluster has browsers, gives a task's set-up and
its episode each their own deadline and cancels (kills) a task that overruns one, retries once an
episode whose worker or node died, and hands every verified record to `on_result`: the caller
alone writes the store, so an episode is stored once or, if the driver dies first, not at all.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

from susbench import __version__
from susbench.controller.environment import WorkerSetup
from susbench.controller.episode import error_record
from susbench.controller.planning import EpisodeJob
from susbench.core.errors import SusbenchError
from susbench.core.models import Event
from susbench.distributed.artifacts import pack
from susbench.distributed.signing import SignedRecord, UnverifiedRecord, new_run_key, open_record
from susbench.distributed.worker import Ready, WorkerPlacement, WorkerSetupFailed, run_episode
from susbench.records.episode import EpisodeRecord

BROWSER = "browser"
NODE_HINT = f"`ray start --address=HEAD:PORT --resources='{{\"{BROWSER}\": N}}'`"
SETUP_GRACE_S = 120.0
END_GRACE_S = 20.0
POLL_S = 0.5
CAPACITY_REFRESH_S = 5.0
NO_BROWSERS_GRACE_S = 60.0
SETUP_FAILURES_PER_BROWSER = 2


@dataclass
class _Flight:
    """One attempt at one episode, from submission to its record."""

    job: EpisodeJob
    attempt: int = 1
    first_failure: str | None = None
    placement: WorkerPlacement | None = None
    placed_ms: int = 0
    fetched: tuple[str, ...] = ()
    started_at: datetime | None = None
    deadline: float = math.inf
    timeout_reason: str = ""

    def retry(self, reason: str) -> _Flight:
        return _Flight(job=self.job, attempt=self.attempt + 1, first_failure=reason)

    def requeued(self) -> _Flight:
        return _Flight(job=self.job, attempt=self.attempt, first_failure=self.first_failure)


@dataclass
class _Capacity:
    """The cluster's browsers, asked again every few seconds (nodes come and go)."""

    ask: Callable[[], int]
    value: int = 0
    asked_at: float = -math.inf
    empty_since: float | None = None

    def now(self) -> int:
        if time.monotonic() - self.asked_at > CAPACITY_REFRESH_S:
            self.value, self.asked_at = self.ask(), time.monotonic()
        return self.value


class RayExecutor:
    """Runs jobs as Ray tasks; open it per run (`with`), which ships the run's artifacts once."""

    def __init__(self, ray: ModuleType, setup: WorkerSetup, browsers: Callable[[], int]) -> None:
        self._ray = ray
        self._setup = setup
        self._capacity = _Capacity(browsers)
        self._flights: dict[Any, _Flight] = {}
        self._refs: dict[str, list[Any]] = {}
        self._setup_failures = 0

    def __enter__(self) -> RayExecutor:
        self._key = new_run_key()
        shipment, self._refs = pack(self._setup, __version__, self._ray.put)
        self._shipment_json = shipment.model_dump_json()
        self._task = self._ray.remote(run_episode).options(
            num_cpus=0, resources={BROWSER: 1}, max_retries=0, name="run_episode"
        )
        return self

    def __exit__(self, *exc_info: object) -> None:
        for generator in self._flights:
            with suppress(Exception):
                self._ray.cancel(generator, force=True)
        self._flights.clear()
        self._refs.clear()

    def run(self, jobs: Sequence[EpisodeJob], on_result: Callable[[EpisodeRecord], None]) -> None:
        """Run every job once; records arrive through `on_result` in completion order."""
        pending = deque(_Flight(job=job) for job in jobs)
        while pending or self._flights:
            self._launch(pending)
            for generator in self._ready():
                self._advance(generator, pending, on_result)
            self._expire(on_result)

    def _launch(self, pending: deque[_Flight]) -> None:
        capacity = self._capacity.now()
        self._check_browsers_left(capacity, bool(pending))
        while pending and len(self._flights) < capacity:
            flight = pending.popleft()
            generator = self._task.remote(
                self._shipment_json, self._refs, flight.job.model_dump_json(), self._key
            )
            self._flights[generator] = flight

    def _check_browsers_left(self, capacity: int, waiting: bool) -> None:
        """A cluster whose last browser node left (and none came back for a while) ends the run."""
        if capacity > 0 or not waiting or self._flights:
            self._capacity.empty_since = None
            return
        now = time.monotonic()
        if self._capacity.empty_since is None:
            self._capacity.empty_since = now
        elif now - self._capacity.empty_since > NO_BROWSERS_GRACE_S:
            raise SusbenchError(
                f"the Ray cluster has had no node with a '{BROWSER}' resource for "
                f"{NO_BROWSERS_GRACE_S:.0f} s; expected nodes started with {NODE_HINT}"
            )

    def _ready(self) -> list[Any]:
        """The tasks with something new to say, waiting up to POLL_S for the first one."""
        if not self._flights:
            time.sleep(POLL_S)
            return []
        waiting = list(self._flights)
        ready, _ = self._ray.wait(waiting, num_returns=1, timeout=POLL_S)
        if not ready:
            return []
        ready, _ = self._ray.wait(waiting, num_returns=len(waiting), timeout=0)
        return ready

    def _advance(
        self, generator: Any, pending: deque[_Flight], on_result: Callable[[EpisodeRecord], None]
    ) -> None:
        flight = self._flights[generator]
        try:
            item = self._ray.get(next(generator))
        except StopIteration:
            item = None
        except WorkerSetupFailed as exc:
            del self._flights[generator]
            self._setup_failed(_reason(exc))
            pending.appendleft(flight.requeued())
            return
        except self._ray.exceptions.RayError as exc:
            item = exc
        if isinstance(item, WorkerPlacement):
            flight.placement, flight.placed_ms = item, int(time.time() * 1000)
            flight.deadline = time.monotonic() + SETUP_GRACE_S
            flight.timeout_reason = f"worker set-up took longer than {SETUP_GRACE_S:.0f} s"
            return
        if isinstance(item, Ready):
            flight.fetched = item.fetched
            flight.started_at = datetime.now(UTC)
            flight.deadline = time.monotonic() + flight.job.timeout_s + END_GRACE_S
            flight.timeout_reason = f"episode timed out after {flight.job.timeout_s:.0f} s"
            return
        del self._flights[generator]
        if isinstance(item, SignedRecord):
            on_result(self._verified(flight, item))
            return
        reason = "worker died: " + (_reason(item) if item is not None else "the task ended without a record")
        if flight.attempt == 1:
            pending.appendleft(flight.retry(reason))
        else:
            on_result(
                self._error(flight, f"retried once on another worker: {flight.first_failure}; then {reason}")
            )

    def _setup_failed(self, reason: str) -> None:
        """A set-up failure requeues the episode, until workers keep failing (as in the local pool)."""
        self._setup_failures += 1
        if self._setup_failures > SETUP_FAILURES_PER_BROWSER * max(1, self._capacity.value):
            raise SusbenchError(f"Ray workers keep failing to get ready: {reason}")

    def _expire(self, on_result: Callable[[EpisodeRecord], None]) -> None:
        """Cancel (kill) every task past its deadline; its episode is stored as an error."""
        now = time.monotonic()
        for generator, flight in list(self._flights.items()):
            if now > flight.deadline:
                with suppress(Exception):
                    self._ray.cancel(generator, force=True)
                del self._flights[generator]
                on_result(self._error(flight, flight.timeout_reason))

    def _verified(self, flight: _Flight, signed: SignedRecord) -> EpisodeRecord:
        try:
            record = open_record(signed, self._key, flight.job.episode.id)
        except UnverifiedRecord as exc:
            return self._error(flight, str(exc))
        return record.model_copy(update={"events": (*self._controller_events(flight), *record.events)})

    def _error(self, flight: _Flight, message: str) -> EpisodeRecord:
        record = error_record(flight.job, flight.started_at or datetime.now(UTC), message)
        return record.model_copy(update={"events": (*self._controller_events(flight), *record.events)})

    def _controller_events(self, flight: _Flight) -> tuple[Event, ...]:
        """Where the episode ran (and what its worker fetched), and the failure that made it a retry."""
        events = []
        if flight.placement is not None:
            detail = {
                "backend": "ray",
                "node": flight.placement.node_id,
                "worker_pid": flight.placement.worker_pid,
                "fetched": list(flight.fetched),
            }
            events.append(Event(ts_ms=flight.placed_ms, source="controller", kind="placed", detail=detail))
        if flight.first_failure is not None:
            detail = {"attempt": flight.attempt, "reason": flight.first_failure}
            retried_ms = flight.placed_ms or int(time.time() * 1000)
            events.append(Event(ts_ms=retried_ms, source="controller", kind="retried", detail=detail))
        return tuple(events)


def _reason(error: BaseException) -> str:
    """One line naming what went wrong (Ray wraps a task's exception; its cause says it best)."""
    cause = getattr(error, "cause", None)
    shown = cause if isinstance(cause, BaseException) else error
    text = str(shown).strip().splitlines()
    return f"{type(shown).__name__}: {text[0]}" if text else type(shown).__name__
