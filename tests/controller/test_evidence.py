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
from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks, select_tasks
from susbench.controller import EpisodeExecutor, EpisodeJob, RunOptions, plan_episodes, run_benchmark
from susbench.controller.budget import Overtime, time_budget
from susbench.controller.environment import WorkerSetup
from susbench.controller.episode import EpisodeRunner
from susbench.controller.pool import SETUP_GRACE_S, LocalProcessPool
from susbench.core.errors import SusbenchError
from susbench.core.paths import TASKS_DIR
from susbench.operators import (
    BASELINES,
    OPERATORS,
    OperatorResult,
    OperatorSettings,
    Oracle,
    OracleBaseline,
    SubjectContext,
    register_operator,
)
from susbench.operators.scripted import Policy, ScriptedOperator
from susbench.records.episode import EpisodeRecord
from susbench.results.store import Store

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

    def __init__(self, policy: Policy, failure: Callable[[SubjectContext], None]) -> None:
        self.name = f"{policy}-then-fails"
        self._scripted = ScriptedOperator(self.name, policy)
        self._failure = failure

    def act(self, ctx: SubjectContext, oracle: Oracle) -> OperatorResult:
        self._scripted.act(ctx, oracle)
        self._failure(ctx)
        raise AssertionError("unreachable: the failure raises or hangs")


class FailsAtOnce:
    """An operator under test that fails before doing anything."""

    name = "fails-at-once"
    needs_cdp = False

    def __init__(self, settings: OperatorSettings) -> None:
        self.settings = settings

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
    BASELINES["careful-then-hangs"] = lambda: DecidesThenFails("careful", hang)
    BASELINES["naive-then-crashes"] = lambda: DecidesThenFails("naive", crash)
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
    # fails-at-once crashed before deciding anything: whatever the extension makes of the episode's
    # end (an exposure counts only once the pattern could be seen), its outcome is `error`.
    decided_before_end = [row for row in deciding if row[1] != "episode_end"]
    assert decided_before_end == [
        ("careful-then-hangs", "choice", "safe"),
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


def test_a_worker_that_cannot_start_stops_the_run_with_its_reason(tmp_path: Path) -> None:
    missing = tmp_path / "gone.wacz"
    setup = WorkerSetup(mode="snapshot", snapshot=missing, extension_dir=tmp_path, tmp_dir=tmp_path)
    injections = {injection.id: injection for injection in load_injections()}
    options = RunOptions(operator="naive", tasks=TASK, db=tmp_path / "r.duckdb")
    jobs = plan_episodes(
        "run-x", select_tasks(load_tasks(TASKS_DIR, injections), TASK, injections), injections, options
    )
    started = time.monotonic()
    with (
        LocalProcessPool(setup, 1) as pool,
        pytest.raises(SusbenchError, match=f"an episode worker could not start: {missing}: no such file$"),
    ):
        pool.run(jobs, lambda record: None)
    assert time.monotonic() - started < SETUP_GRACE_S, "refused at once, not retried until the grace ran out"
