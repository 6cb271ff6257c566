"""The plan of a study's design: repeats replicate a task's injection (redrawn only when asked), and
`--control paired` gives every injected episode a control of its own (no browser)."""

from __future__ import annotations

from pathlib import Path

import pytest

from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks
from susbench.controller import RunOptions, episode_key, plan_episodes, run_identity
from susbench.controller.options import check_options
from susbench.core.errors import SusbenchError
from susbench.core.identity import RunInputs
from susbench.core.models import Injection, Task

INPUTS = RunInputs(
    snapshot_sha256="ab",
    task_catalog_sha256="tasks",
    injection_catalog_sha256="injections",
    extension_sha256="extension",
    susbench_version="1",
)


@pytest.fixture(scope="module")
def injections() -> dict[str, Injection]:
    return {injection.id: injection for injection in load_injections()}


@pytest.fixture(scope="module")
def tasks(injections: dict[str, Injection]) -> list[Task]:
    return load_tasks(injections=injections)


def test_repeats_replicate_the_first_repeats_injection(
    tasks: list[Task], injections: dict[str, Injection]
) -> None:
    options = RunOptions(operator="random", repeats=4)
    jobs = plan_episodes("run-x", tasks, injections, options)
    first = {
        job.task.id: job.episode
        for job in plan_episodes("run-x", tasks, injections, RunOptions(operator="random"))
    }
    for job in jobs:
        assert job.episode.injection_id == first[job.task.id].injection_id
    assert [job.episode for job in jobs if job.episode.repeat == 0] == list(
        first.values()
    )  # repeat 0 as before
    seeds = {job.task.id: set() for job in jobs}
    for job in jobs:
        seeds[job.task.id].add(job.episode.seed)
    assert all(len(found) == 4 for found in seeds.values())  # each replicate draws its operator's seed anew
    assert len({job.episode.id for job in jobs}) == len(jobs)


def test_redrawn_injections_vary_by_repeat_and_make_another_run(
    tasks: list[Task], injections: dict[str, Injection]
) -> None:
    options = RunOptions(operator="random", repeats=4, redraw_injections=True)
    jobs = plan_episodes("run-x", tasks, injections, options)
    drawn: dict[str, set[str | None]] = {}
    for job in jobs:
        drawn.setdefault(job.task.id, set()).add(job.episode.injection_id)
    assert any(len(found) > 1 for found in drawn.values())
    same = run_identity(RunOptions(operator="random"), INPUTS)
    assert run_identity(options, INPUTS).run_id() != same.run_id()
    assert "redraw_injections" in run_identity(options, INPUTS).model_dump()


def test_paired_controls_are_twins_of_their_injected_episodes(
    tasks: list[Task], injections: dict[str, Injection]
) -> None:
    options = RunOptions(operator="naive", repeats=2, control="paired")
    jobs = plan_episodes("run-x", tasks, injections, options)
    plain = plan_episodes("run-x", tasks, injections, RunOptions(operator="naive", repeats=2))
    injected = [job.episode for job in jobs if job.episode.condition == "injected"]
    controls = [job.episode for job in jobs if job.episode.condition == "control"]
    assert injected == [
        job.episode for job in plain
    ]  # the injected episodes are those of the same run unpaired
    assert len(controls) == len(injected) == 2 * len(tasks)
    for treated, control in zip(injected, controls, strict=True):
        assert (control.task_id, control.repeat, control.seed, control.operator, control.run_id) == (
            treated.task_id,
            treated.repeat,
            treated.seed,
            treated.operator,
            treated.run_id,
        )
        assert control.injection_id is None and control.pattern_type is None
        assert (
            control.id
            == episode_key("run-x", control.task_id, control.repeat, paired_control=True)
            != treated.id
        )
    # paired controls extend a run as more repeats do: the identity is the unpaired run's
    assert (
        run_identity(options, INPUTS).run_id() == run_identity(RunOptions(operator="naive"), INPUTS).run_id()
    )


def test_paired_controls_and_a_control_rate_exclude_each_other(tmp_path: Path) -> None:
    options = RunOptions(operator="naive", control="paired", control_rate=0.2, db=tmp_path / "r.duckdb")
    with pytest.raises(SusbenchError, match="--control paired gives every injected episode its own control"):
        check_options(options)
