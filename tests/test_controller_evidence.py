"""Evidence outlives errors: a pattern the extension decided before the operator failed or ran out
of time is stored as decided, with the failure beside it; a failure before any decision is `error`.

The operators are the real scripted baselines (real trusted clicks, scored by the real extension on
the bundled snapshot), each followed by a failure; episodes run through `run_benchmark` into DuckDB.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from playwright.sync_api import Playwright

from susbench.browser import LocalBackend
from susbench.controller import EpisodeExecutor, EpisodeJob, RunOptions, run_benchmark
from susbench.controller.budget import Overtime, time_budget
from susbench.controller.environment import WorkerSetup
from susbench.controller.episode import EpisodeRunner
from susbench.operators import (
    BASELINES,
    OPERATORS,
    OperatorResult,
    Oracle,
    OracleBaseline,
    SubjectContext,
    register_operator,
)
from susbench.operators.scripted import Policy, ScriptedOperator
from susbench.store import EpisodeRecord, Store

TASK = "threadline-scarf-cart"  # confirm shaming: careful clicks the safe choice, naive the manipulative one
BUDGET_S = 25.0
HANG_MS = 3_600_000


def hang(ctx: SubjectContext) -> None:
    """Wait inside a Playwright call that would not return for an hour."""
    ctx.page.wait_for_timeout(HANG_MS)


def crash(ctx: SubjectContext) -> None:
    raise RuntimeError("the model server went away")


class DecidesThenFails(OracleBaseline):
    """A scripted baseline that decides the pattern as its policy says, then fails."""

    def __init__(self, seed: int, policy: Policy, failure: Callable[[SubjectContext], None]) -> None:
        self.name = f"{policy}-then-fails"
        self._scripted = ScriptedOperator(self.name, seed, policy)
        self._failure = failure

    def act(self, ctx: SubjectContext, oracle: Oracle) -> OperatorResult:
        self._scripted.act(ctx, oracle)
        self._failure(ctx)
        raise AssertionError("unreachable: the failure raises or hangs")


class FailsAtOnce:
    """An operator under test that fails before doing anything."""

    name = "fails-at-once"
    needs_cdp = False

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def act(self, ctx: SubjectContext) -> OperatorResult:
        crash(ctx)
        return OperatorResult(done=False)


class InProcess:
    """An executor running the controller's own episode runner in this process, on the test
    session's Playwright (the test's operators are registered here, not in worker processes)."""

    def __init__(self, setup: WorkerSetup, playwright: Playwright) -> None:
        self._runner = EpisodeRunner(setup, LocalBackend(playwright))

    def __enter__(self) -> InProcess:
        self._runner.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._runner.__exit__(*exc_info)

    def run(self, jobs: Sequence[EpisodeJob], on_result: Callable[[EpisodeRecord], None]) -> None:
        for job in jobs:
            on_result(self._runner.run(job))


@pytest.fixture
def failing_operators() -> Iterator[None]:
    BASELINES["careful-then-hangs"] = lambda seed: DecidesThenFails(seed, "careful", hang)
    BASELINES["naive-then-crashes"] = lambda seed: DecidesThenFails(seed, "naive", crash)
    register_operator("fails-at-once", FailsAtOnce)
    yield
    del BASELINES["careful-then-hangs"], BASELINES["naive-then-crashes"], OPERATORS["fails-at-once"]


@pytest.mark.e2e
@pytest.mark.usefixtures("failing_operators")
def test_decided_outcomes_survive_the_operators_failure(web_playwright: Playwright, tmp_path: Path) -> None:
    db = tmp_path / "evidence.duckdb"

    def executor(setup: WorkerSetup, size: int) -> AbstractContextManager[EpisodeExecutor]:
        return InProcess(setup, web_playwright)

    for operator in ("careful-then-hangs", "naive-then-crashes", "fails-at-once"):
        options = RunOptions(operator=operator, tasks=TASK, db=db, episode_timeout_s=BUDGET_S)
        run_benchmark(options, executor=executor)

    with Store(db, read_only=True) as store:
        _, rows = store.query("SELECT operator, outcome, error FROM episode_outcomes ORDER BY operator")
        _, deciding = store.query(
            "SELECT o.operator, ev.kind, json_extract_string(ev.detail, '$.role') FROM episode_outcomes o "
            "JOIN events ev USING (episode_id) WHERE json_extract_string(ev.detail, '$.deciding') = 'true' "
            "ORDER BY 1"
        )
    assert rows == [
        ("careful-then-hangs", "avoided", f"operator timed out after {BUDGET_S:g} s"),
        ("fails-at-once", "error", "operator failed: RuntimeError: the model server went away"),
        ("naive-then-crashes", "not_avoided", "operator failed: RuntimeError: the model server went away"),
    ]
    # The pattern was on screen when fails-at-once crashed: the extension would score the episode's
    # end as "avoided", but nothing was decided before the failure, so the outcome is `error`.
    assert deciding == [
        ("careful-then-hangs", "choice", "safe"),
        ("fails-at-once", "episode_end", None),
        ("naive-then-crashes", "choice", "manipulative"),
    ]


def test_the_budget_interrupts_a_sleep_and_keeps_an_outer_alarm() -> None:
    fired: list[float] = []
    outer = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(time.monotonic()))
    try:
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        started = time.monotonic()
        with pytest.raises(Overtime, match=r"0\.2 s budget"), time_budget(0.2):
            time.sleep(5)
        assert 0.15 < time.monotonic() - started < 0.9
        assert 0.0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 0.85
        time.sleep(1.0)
        assert len(fired) == 1 and fired[0] - started == pytest.approx(1.0, abs=0.4)
        with time_budget(5.0):
            pass
        assert signal.getitimer(signal.ITIMER_REAL)[0] == 0.0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer)
