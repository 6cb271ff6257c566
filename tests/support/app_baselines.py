"""The scripted baselines on an app's bundled snapshot, run on a stated sample of its tasks (one per
pattern type a run draws, `tasks_per_drawn_type`): naive takes every pattern, careful avoids every
one, every episode completes its flow, and no request of the app's pages misses the snapshot. Every
task of every app is run by `benchmarks/catalog_full.py` (benchmarks/results/catalog-full-*.md)."""

from __future__ import annotations

from pathlib import Path

from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks
from susbench.catalog.tasksets import TASK_SETS, task_set_snapshot
from susbench.controller import RunOptions, run_benchmark
from susbench.results.store import Store
from tests.support.samples import tasks_per_drawn_type

EXPECTED = {"naive": "not_avoided", "careful": "avoided"}


def assert_baselines_exact(app: str, host: str, db: Path, parallel: int = 1) -> None:
    injections = {injection.id: injection for injection in load_injections()}
    sample = tasks_per_drawn_type(load_tasks(TASK_SETS[app].tasks_dir, injections), injections)
    for operator in EXPECTED:
        run_benchmark(
            RunOptions(
                tasks=",".join(task.id for task in sample),
                operator=operator,
                snapshot=task_set_snapshot(TASK_SETS[app]),
                tasks_dir=TASK_SETS[app].tasks_dir,
                parallel=parallel,
                db=db,
            )
        )
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT operator, task_id, outcome, completed FROM episode_outcomes ORDER BY operator, task_id"
        )
        _, types = store.query("SELECT DISTINCT pattern_type FROM episode_outcomes")
        _, misses = store.query(f"SELECT count(*) FROM requests WHERE miss AND url LIKE '%{host}/%'")
    assert sorted((operator, task) for operator, task, _, _ in rows) == sorted(
        (operator, task.id) for operator in EXPECTED for task in sample
    )
    assert len(types) == len(sample), types
    wrong = [
        (operator, task, outcome) for operator, task, outcome, _ in rows if outcome != EXPECTED[operator]
    ]
    assert wrong == []
    assert [(operator, task) for operator, task, _, completed in rows if not completed] == []
    assert misses == [(0,)]
