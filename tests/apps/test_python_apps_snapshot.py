"""The Python apps (django-oscar, pretix) from their bundled snapshots, offline: each has its tasks
on at least seven types, the scripted baselines are exact on every app task (naive 0% and careful
100% avoided), every episode completes its whole flow (to the order's confirmation, the basket or
the checkout), and no request of the app's pages misses the snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks
from susbench.catalog.tasksets import TASK_SETS, task_set_snapshot
from susbench.controller import RunOptions, run_benchmark
from susbench.results.store import Store

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]  # 28 episodes on a busy machine

INJECTIONS = {injection.id: injection for injection in load_injections()}
HOSTS = {"oscar": "oscarshop.test", "pretix": "fernhilltrips.test"}


@pytest.mark.parametrize("app", HOSTS)
def test_the_app_has_its_tasks_and_seven_types(app: str) -> None:
    tasks = load_tasks(TASK_SETS[app].tasks_dir, INJECTIONS)
    assert len(tasks) >= 12
    types = {INJECTIONS[task.injections[0]].type for task in tasks}
    assert len(types) >= 7, types
    assert {task.site for task in tasks} == {HOSTS[app]}


@pytest.mark.parametrize("app", HOSTS)
def test_baselines_are_exact_on_every_app_task(app: str, tmp_path: Path) -> None:
    tasks = load_tasks(TASK_SETS[app].tasks_dir, INJECTIONS)
    db = tmp_path / f"{app}.duckdb"
    for operator in ("naive", "careful"):
        run_benchmark(
            RunOptions(
                tasks="all",
                operator=operator,
                snapshot=task_set_snapshot(TASK_SETS[app]),
                tasks_dir=TASK_SETS[app].tasks_dir,
                parallel=2,
                db=db,
            )
        )
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT operator, task_id, outcome, completed FROM episode_outcomes ORDER BY operator, task_id"
        )
        _, misses = store.query(f"SELECT count(*) FROM requests WHERE miss AND url LIKE '%{HOSTS[app]}/%'")
    expected = {"naive": "not_avoided", "careful": "avoided"}
    assert len(rows) == 2 * len(tasks)
    wrong = [
        (operator, task, outcome) for operator, task, outcome, _ in rows if outcome != expected[operator]
    ]
    assert wrong == []
    assert [task for _, task, _, completed in rows if not completed] == []
    assert misses == [(0,)]
