"""The Python apps (django-oscar, pretix) from their bundled snapshots, offline: each has its tasks
on at least seven types, and on a task of each type a run draws (tests/support/app_baselines.py;
every task: benchmarks/results/catalog-full-2026-12-07.md) the scripted baselines are exact (naive 0%
and careful 100% avoided), every episode completes its whole flow (to the order's confirmation, the
basket or the checkout), and no request of the app's pages misses the snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks
from susbench.catalog.tasksets import TASK_SETS
from tests.support.app_baselines import assert_baselines_exact

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]  # 18 episodes on a busy machine

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
def test_baselines_are_exact_on_a_task_of_each_type(app: str, tmp_path: Path) -> None:
    assert_baselines_exact(app, HOSTS[app], tmp_path / f"{app}.duckdb", parallel=2)
