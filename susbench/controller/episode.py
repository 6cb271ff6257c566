"""One episode in one fresh browser: hand the episode to the extension, let the operator act, score it.

A failure is the episode's, never the run's, and the browser is always closed. When the operator
fails or runs out of time, the extension is still asked for its signed verdict: if the evidence
had already decided the pattern, that outcome is kept and the failure is stored beside it;
otherwise the outcome is `error`. The operator under test gets a `SubjectContext` only; the oracle
(pattern type, choices with roles, reference path) goes to the built-in scripted baselines alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from susbench.browser import BrowserBackend, BrowserSession
from susbench.browser.bridge import ExtensionBridge, ExtensionEpisode, ExtensionReport
from susbench.controller.browsers import EpisodeBrowsers, HostBrowsers, worker_browsers
from susbench.controller.budget import Overtime, time_budget
from susbench.controller.environment import WorkerSetup
from susbench.controller.planning import EpisodeJob
from susbench.controller.stopping import TurnStopped, seated_turn
from susbench.controller.traffic import TrafficSource
from susbench.core.errors import BrowserError
from susbench.core.models import Event, EventSource, Frozen, Outcome, OutcomeKind, Task
from susbench.operators import (
    BudgetEnded,
    Limits,
    Operator,
    OperatorResult,
    Oracle,
    OracleBaseline,
    Seated,
    SubjectContext,
    make_operator,
)
from susbench.records.episode import EpisodeRecord, Evidence
from susbench.records.trace import StepRecord
from susbench.results.decided import EpisodeFacts, after_failure, decided_by, deciding_index
from susbench.results.rules import rules_version

Note = Callable[[EventSource, str, dict[str, Any]], None]
Record = Callable[[str, dict[str, Any]], None]


def _event(source: EventSource, kind: str, detail: dict[str, Any]) -> Event:
    return Event(ts_ms=int(time.time() * 1000), source=source, kind=kind, detail=detail)


def describe(exc: BaseException) -> str:
    """`Type: first line of the message`, short enough for a table cell."""
    first_line = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {first_line}"


class ScoredTurn(Frozen):
    """How an episode's turn ended: what the operator said, its failure (None when it stopped by
    itself), the extension's verified report, and the task's completion on that evidence; the signed
    report as stored evidence."""

    result: OperatorResult
    failure: str | None
    report: ExtensionReport
    completed: bool | None
    evidence: Evidence

    @property
    def outcome(self) -> Outcome:
        """The extension's outcome; after a failure only if the pattern was decided before it (an
        unverifiable report stays the error it is)."""
        outcome = self.report.to_outcome()
        if outcome.kind == OutcomeKind.ERROR:
            return outcome
        events = self.report.events
        kind, reason = after_failure(
            outcome.kind, outcome.reason, events, deciding_index(events), self.failure
        )
        return outcome.model_copy(update={"kind": kind, "reason": reason})


def error_record(
    job: EpisodeJob, started_at: datetime, message: str, steps: tuple[StepRecord, ...] = ()
) -> EpisodeRecord:
    """An episode that failed outside the operator's control: stored as outcome `error`, with the
    steps its operator traced before it failed."""
    episode = job.episode
    return EpisodeRecord(
        episode=episode,
        started_at=started_at,
        ended_at=datetime.now(UTC),
        error=message,
        trace=steps,
        outcome=Outcome(
            episode_id=episode.id, injection_id=episode.injection_id, kind=OutcomeKind.ERROR, reason=message
        ),
        events=(_event("controller", "error", {"message": message}),),
    )


@dataclass(frozen=True)
class TurnSetup:
    """What an operator's turn needs beyond the task and the running episode: its limits and seed,
    the browser's CDP endpoint (handed on only to an operator that asks for it), and where its
    evidence (`record`) and step-by-step trace (`record_step`, files in `trace_dir`) go."""

    limits: Limits
    seed: int = 0
    cdp_endpoint: str | None = None
    record: Record = field(default=lambda kind, detail: None)
    trace_dir: Path | None = None
    record_step: Callable[[StepRecord], None] = field(default=lambda step: None)


def act_on_task(
    operator: Operator | OracleBaseline, task: Task, page: Page, episode: ExtensionEpisode, turn: TurnSetup
) -> OperatorResult:
    """The operator's turn at a task whose episode the extension is running: every operator gets the
    subject's context; only a built-in scripted baseline is also handed the oracle."""
    bridge = episode.bridge
    ctx = SubjectContext(
        instruction=task.instruction,
        page=page,
        cdp_endpoint=turn.cdp_endpoint if operator.needs_cdp else None,
        limits=turn.limits,
        record=turn.record,
        trace_dir=turn.trace_dir,
        record_step=turn.record_step,
        marks=bridge.marks,
        episode_id=episode.id,
        seed=turn.seed,
        completed=lambda: episode.completed(page),
    )
    if not isinstance(operator, OracleBaseline):
        return operator.act(ctx)
    oracle = Oracle(
        pattern_type=episode.pattern_type,
        reference_path=task.reference_path,
        choices=lambda scroll_to: bridge.choices(page, scroll_to=scroll_to),
        placing=episode.placing,
    )
    return operator.act(ctx, oracle)


class ChromiumFaults:
    """Notes Chromium failing under an episode, so its error names the cause (a renderer crash, the
    browser gone) rather than the symptom a later call met (a timeout waiting for the extension)."""

    def __init__(self, session: BrowserSession, page: Page) -> None:
        self.cause: str | None = None
        page.on("crash", lambda _: self._note("the page's renderer process crashed during the episode"))
        session.context.on("close", lambda _: self._note("the browser closed during the episode"))

    def _note(self, cause: str) -> None:
        self.cause = self.cause or cause


class EpisodeRunner:
    """Runs episodes one after another in a worker: the worker's browsers (`browsers.worker_browsers`:
    local, or a warm container), a fresh browser per episode.

    `backend` replaces the backend the worker would make (tests and benchmarks share theirs).
    """

    def __init__(self, setup: WorkerSetup, backend: BrowserBackend | None = None) -> None:
        self.setup = setup
        self._backend = backend
        self._stack = ExitStack()
        self._browsers: EpisodeBrowsers | None = None
        self._steps: list[StepRecord] = []
        self._operators: dict[str, Operator | OracleBaseline] = {}

    def __enter__(self) -> EpisodeRunner:
        try:
            self._browsers = self._stack.enter_context(worker_browsers(self.setup, self._backend))
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    @property
    def traffic(self) -> TrafficSource:
        """The worker's replay or live traffic (browsers on this machine only; a container has its own)."""
        if not isinstance(self._browsers, HostBrowsers):
            raise BrowserError("this worker's browsers are in a container: their traffic is the container's")
        return self._browsers.traffic

    def run(self, job: EpisodeJob) -> EpisodeRecord:
        """One episode; a failure outside the operator's turn is an `error` outcome, the browser is
        always closed."""
        started_at = datetime.now(UTC)
        self._steps = []
        try:
            return self._run(job, started_at)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure is the episode's error, not the run's
            return error_record(job, started_at, describe(exc), tuple(self._steps))

    def _operator(self, name: str) -> Operator | OracleBaseline:
        """The worker's operator of that name, built for its first episode and kept for the rest (a
        run has one operator); each episode hands it the episode's own seed in its context."""
        if name not in self._operators:
            self._operators[name] = make_operator(name, self.setup.operator_settings)
        return self._operators[name]

    def _run(self, job: EpisodeJob, started_at: datetime) -> EpisodeRecord:
        assert self._browsers is not None, "use EpisodeRunner as a context manager"
        episode = job.episode
        operator = self._operator(episode.operator)
        events: list[Event] = []

        def note(source: EventSource, kind: str, detail: dict[str, Any]) -> None:
            events.append(_event(source, kind, detail))

        asked = time.monotonic()
        window = tuple(operator.window_args()) if isinstance(operator, Seated) else None
        with self._browsers.episode(
            episode, job.task.capture_plan().id, operator.needs_cdp, window
        ) as browser:
            launch_ms = round(1000 * (time.monotonic() - asked))
            verdict = self._drive(job, browser.session, operator, note, launch_ms)
        report = verdict.report
        facts = EpisodeFacts.of(episode.site, verdict.completed, events, browser.requests)
        decided = decided_by(
            verdict.outcome.kind, report.pattern_type, report.events, deciding_index(report.events), facts
        )
        return EpisodeRecord(
            episode=episode,
            started_at=started_at,
            ended_at=datetime.now(UTC),
            steps=verdict.result.steps,
            completed=verdict.completed,
            final_message=verdict.result.message,
            error=verdict.failure,
            outcome=verdict.outcome,
            events=tuple(sorted((*events, *verdict.report.events), key=lambda event: event.ts_ms)),
            requests=browser.requests,
            archive=browser.archive,
            trace=tuple(self._steps),
            evidence=verdict.evidence,
            decided_by=decided,
        )

    def _drive(
        self,
        job: EpisodeJob,
        session: BrowserSession,
        operator: Operator | OracleBaseline,
        note: Note,
        launch_ms: int,
    ) -> ScoredTurn:
        """Open the start page with the episode handed to the extension, let the operator act within
        its time budget, score; the operator's failure (or None) comes back beside the report.

        The `ready` event says how long the browser took to start (`launch_ms`) and then the start
        page to load (`ms`)."""
        t0 = time.monotonic()
        bridge = ExtensionBridge(session.context)
        with bridge.episode(job.episode.id, job.episode.injection_id, job.task.completion) as episode:
            page = session.first_page()
            crashes = ChromiumFaults(session, page)
            page.set_default_timeout(1000 * job.step_timeout_s)
            page.goto(job.task.start_url, wait_until="load")
            loaded_ms = round(1000 * (time.monotonic() - t0))
            note("controller", "ready", {"url": job.task.start_url, "launch_ms": launch_ms, "ms": loaded_ms})
            turn = TurnSetup(
                limits=Limits(
                    max_steps=job.task.max_steps, max_seconds=job.timeout_s, step_timeout_s=job.step_timeout_s
                ),
                seed=job.episode.seed,
                cdp_endpoint=session.cdp_endpoint,
                record=partial(note, "operator"),
                trace_dir=None if self.setup.trace_dir is None else self.setup.trace_dir / job.episode.id,
                record_step=self._steps.append,
            )
            result, failure, ran_out = OperatorResult(done=False), None, False
            turn_started = time.monotonic()
            try:
                with time_budget(job.timeout_s), seated_turn(isinstance(operator, Seated)):
                    result = act_on_task(operator, job.task, page, episode, turn)
            except Overtime as exc:
                failure, ran_out = f"operator timed out after {exc.seconds:g} s", True
            except BudgetEnded as exc:
                failure, ran_out = f"operator failed: {describe(exc)}", True
            except TurnStopped:
                seconds = time.monotonic() - turn_started
                failure = f"stopped after {seconds:.1f} s: the run was stopped during the person's turn"
            except Exception as exc:  # noqa: BLE001 - the operator's failure is stored beside the verdict
                failure = crashes.cause or f"operator failed: {describe(exc)}"
            if failure is None:
                stopped = {"done": result.done, "steps": result.steps, "message": result.message}
                note("operator", "stopped", {**stopped, "ran_out": result.ran_out})
            else:
                note("controller", "error", {"message": failure, "ran_out": ran_out})
            try:
                final_page = session.active_page()
                report = episode.report()
                signed = episode.collect()
                evidence = Evidence(
                    payload=signed.payload,
                    signature=signed.signature,
                    key=episode.key(),
                    rules_version=rules_version(self.setup.extension_dir),
                )
                return ScoredTurn(
                    result=result,
                    failure=failure,
                    report=report,
                    completed=episode.completed(final_page),
                    evidence=evidence,
                )
            except Exception as exc:
                if crashes.cause is None:
                    raise
                raise BrowserError(crashes.cause) from exc
