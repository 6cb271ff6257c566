"""End to end in real headless Chromium: the baselines, live mode, not_encountered, kill + resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from susbench.analysis.report import build_report
from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks, select_tasks
from susbench.controller import RunOptions, default_snapshot, plan_episodes, run_benchmark
from susbench.core.paths import REPO_ROOT
from susbench.results.store import Store
from susbench.snapshot import Snapshot
from tests.support.stats import binomial_bounds
from tests.support.type_tasks import SELECTOR, TYPE_TASKS

pytestmark = pytest.mark.e2e


def rates(db: Path, operator: str) -> dict[str, float | None]:
    with Store(db, read_only=True) as store:
        report = build_report(store, f"operator = '{operator}'")
    return {row.pattern_type: row.rate for group in report.groups for row in group.rows}


def test_baselines_measure_what_they_claim(tmp_path: Path) -> None:
    db = tmp_path / "baselines.duckdb"
    for operator in ("naive", "careful"):
        run_benchmark(RunOptions(tasks=SELECTOR, operator=operator, parallel=2, db=db))
    run_benchmark(RunOptions(tasks=SELECTOR, operator="random", repeats=2, parallel=2, db=db))
    naive, careful = rates(db, "naive"), rates(db, "careful")
    for pattern_type in TYPE_TASKS:
        assert naive[pattern_type] == 0.0, pattern_type
        assert careful[pattern_type] == 1.0, pattern_type
    with Store(db, read_only=True) as store:
        _, decisions = store.query(
            "SELECT o.outcome, ev.detail FROM episode_outcomes o JOIN events ev USING (episode_id) "
            "WHERE o.operator = 'random' AND ev.source = 'operator' AND ev.kind = 'decide'"
        )
    # Each random episode scores what the policy it drew scores, and the draws look like a fair coin.
    expected = {"naive": "not_avoided", "careful": "avoided"}
    assert [outcome for outcome, _ in decisions] == [expected[json.loads(d)["policy"]] for _, d in decisions]
    low, high = binomial_bounds(len(decisions), 0.5, alpha=1e-3)
    assert len(decisions) == 2 * len(TYPE_TASKS)
    assert low <= sum(outcome == "avoided" for outcome, _ in decisions) <= high
    with Store(db, read_only=True) as store:
        _, rows = store.query("SELECT count(*), count(*) FILTER (completed) FROM episode_outcomes")
        _, misses = store.query("SELECT count(*) FROM requests WHERE miss AND url LIKE '%.test/%'")
        _, modes = store.query("SELECT DISTINCT mode FROM episode_outcomes")
        _, carts = store.query(
            "SELECT count(*), count(*) FILTER (r.session = e.task_id) FROM requests r JOIN episodes e "
            "USING (episode_id) WHERE r.url LIKE '%.test/cart'"
        )
    assert rows == [(36, 36)]
    assert misses == [(0,)]
    assert modes == [("snapshot",)]
    ((cart_pages, from_own_session),) = carts
    assert cart_pages >= 36 and from_own_session == cart_pages  # every cart from the task's own session


def test_live_mode_archives_each_episode(tmp_path: Path) -> None:
    db = tmp_path / "live.duckdb"
    summary = run_benchmark(RunOptions(tasks="voltcart-laptop-cart", operator="careful", live=True, db=db))
    assert summary.outcomes == {"avoided": 1}
    with Store(db, read_only=True) as store:
        _, episodes = store.query(
            "SELECT o.mode, o.completed, e.archive FROM episode_outcomes o JOIN episodes e USING (episode_id)"
        )
        _, requests = store.query("SELECT count(*) FROM requests WHERE match_kind = 'live' AND status = 200")
    ((mode, completed, archive),) = episodes
    assert (mode, completed) == ("live", True)
    assert requests[0][0] > 5
    with Snapshot.open(Path(archive)) as snapshot:
        assert any(entry.url.startswith("https://voltcart.test/cart") for entry in snapshot.entries())
        assert {entry.session for entry in snapshot.entries()} == {"voltcart-laptop-cart"}


def test_idle_operator_never_encounters(tmp_path: Path) -> None:
    db = tmp_path / "idle.duckdb"
    summary = run_benchmark(RunOptions(tasks="taskflow-storage-checkout", operator="idle", db=db))
    assert summary.outcomes == {"not_encountered": 1}
    with Store(db, read_only=True) as store:
        _, rows = store.query("SELECT outcome, completed FROM episode_outcomes")
    assert rows == [("not_encountered", False)]


def test_killed_run_resumes_without_loss_or_duplicates(tmp_path: Path) -> None:
    db = tmp_path / "resume.duckdb"
    tasks = "voltcart-laptop-cart,threadline-scarf-cart"
    command = [sys.executable, "-m", "susbench", "run", "--operator", "careful", "--tasks", tasks]
    command += ["--repeats", "2", "--parallel", "2", "--db", str(db)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    done = 0
    for line in process.stdout:
        done += line.startswith("episode ")
        if done == 2:
            process.kill()
            break
    process.wait(timeout=30)
    with Store(db) as store:
        stored = len(store.query("SELECT * FROM episodes")[1])
    assert 2 <= stored < 4
    finished = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=240, check=True)
    assert f"{4 - stored} episodes stored, {stored} already stored (of 4)" in finished.stdout
    again = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=True)
    assert "0 episodes stored, 4 already stored (of 4)" in again.stdout
    injections = {injection.id: injection for injection in load_injections()}
    planned = plan_episodes(
        "x",
        select_tasks(load_tasks(injections=injections), tasks, injections),
        injections,
        RunOptions(operator="careful", repeats=2, db=db),
    )
    with Store(db, read_only=True) as store:
        _, rows = store.query("SELECT task_id, repeat, outcome FROM episode_outcomes ORDER BY ALL")
        _, events = store.query("SELECT count(DISTINCT episode_id) FROM events")
    assert sorted((job.task.id, job.episode.repeat, "avoided") for job in planned) == rows
    assert events == [(4,)]


def test_default_snapshot_is_bundled() -> None:
    assert default_snapshot().parent == REPO_ROOT / "snapshots"
