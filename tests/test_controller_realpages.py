"""The realpages task set: real product pages and a real WARC, generic injections, the scripted
baselines' expected rates on every type, and completion by the page's own control."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks, task_types
from susbench.catalog.tasksets import TASK_SETS, build_realpages_snapshot
from susbench.controller import RunOptions, run_benchmark
from susbench.core.models import PATTERN_TYPES
from susbench.results.store import Store
from susbench.snapshot import Snapshot
from tests.fixtures.cli import run_cli

REALPAGES = TASK_SETS["realpages"]


def test_every_task_carries_generic_injections_of_one_type_and_all_nine_are_covered() -> None:
    injections = {item.id: item for item in load_injections()}
    tasks = load_tasks(REALPAGES.tasks_dir, injections)
    covered = set()
    for task in tasks:
        assert all(injections[item].site == "*" for item in task.injections), task.id
        types = task_types(task, injections)
        assert len(types) == 1, task.id  # so one run draws every type, whichever injection it draws
        covered |= types
        assert task.completion is not None and task.completion.control is not None, task.id
    assert covered == set(PATTERN_TYPES)


def test_the_task_set_is_chosen_by_name_and_never_live() -> None:
    done = run_cli("run", "--task-set", "nowhere", "--operator", "careful")
    assert done.returncode != 0 and "expected one of localweb, realpages" in done.stderr + done.stdout
    done = run_cli("run", "--task-set", "realpages", "--operator", "careful", "--live")
    assert done.returncode != 0 and "replays recorded real pages only" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


@pytest.mark.e2e
def test_baselines_score_zero_and_full_avoidance_on_every_type_of_real_pages(
    realdata: Path, tmp_path: Path
) -> None:
    snapshot = build_realpages_snapshot(realdata)
    injections = {item.id: item for item in load_injections()}
    tasks = load_tasks(REALPAGES.tasks_dir, injections)
    with Snapshot.open(snapshot) as opened:
        archived = {entry.url for entry in opened.entries()}
    assert {task.start_url.split("#", 1)[0] for task in tasks} <= archived
    db = tmp_path / "realpages.duckdb"
    for operator in ("naive", "careful"):
        options = RunOptions(
            operator=operator, snapshot=snapshot, tasks_dir=REALPAGES.tasks_dir, parallel=2, db=db
        )
        summary = run_benchmark(options)
        assert summary.stored == len(tasks), summary
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT operator, pattern_type, outcome, completed, error FROM episode_outcomes"
        )
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for operator, pattern_type, outcome, completed, error in rows:
        assert error is None and completed is True, (operator, pattern_type, outcome, error)
        found[(operator, pattern_type)].append(outcome)
    for pattern_type in PATTERN_TYPES:
        assert set(found[("naive", pattern_type)]) == {"not_avoided"}, pattern_type  # 0% avoidance
        assert set(found[("careful", pattern_type)]) == {"avoided"}, pattern_type  # 100%
