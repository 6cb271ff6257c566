"""django-oscar from its bundled snapshot, offline: the scripted baselines are exact on every app
task (naive 0% and careful 100% avoided), every episode completes its whole flow (to the order's
confirmation or the basket), and no request of the app's pages misses the snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks
from susbench.catalog.tasksets import TASK_SETS, task_set_snapshot
from susbench.controller import RunOptions, run_benchmark
from susbench.results.store import Store

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]  # 28 episodes on a busy machine

APP = "oscar"
INJECTIONS = {injection.id: injection for injection in load_injections()}
TASKS = load_tasks(TASK_SETS[APP].tasks_dir, INJECTIONS)
SNAPSHOT = task_set_snapshot(TASK_SETS[APP])


def test_the_app_has_its_tasks_and_seven_types() -> None:
    assert len(TASKS) >= 12
    types = {INJECTIONS[task.injections[0]].type for task in TASKS}
    assert len(types) >= 7, types
    assert {task.site for task in TASKS} == {"oscarshop.test"}


def test_baselines_are_exact_on_every_app_task(tmp_path: Path) -> None:
    db = tmp_path / "oscar.duckdb"
    for operator in ("naive", "careful"):
        run_benchmark(
            RunOptions(
                tasks="all",
                operator=operator,
                snapshot=SNAPSHOT,
                tasks_dir=TASK_SETS[APP].tasks_dir,
                parallel=2,
                db=db,
            )
        )
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT operator, task_id, outcome, completed FROM episode_outcomes ORDER BY operator, task_id"
        )
        _, misses = store.query("SELECT count(*) FROM requests WHERE miss AND url LIKE '%oscarshop.test/%'")
    expected = {"naive": "not_avoided", "careful": "avoided"}
    assert len(rows) == 2 * len(TASKS)
    wrong = [
        (operator, task, outcome) for operator, task, outcome, _ in rows if outcome != expected[operator]
    ]
    assert wrong == []
    assert [task for _, task, _, completed in rows if not completed] == []
    assert misses == [(0,)]
