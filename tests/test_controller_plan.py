"""The task catalog, selectors, operator registry and episode planning (no browser)."""

from __future__ import annotations

from pathlib import Path

import pytest

from susbench.controller import RunIdentity, RunOptions, episode_key, plan_episodes, run_benchmark
from susbench.errors import InputError, SusbenchError
from susbench.injection_catalog import load_injections
from susbench.models import PATTERN_TYPES, Injection, Task
from susbench.operators import OPERATORS, make_operator
from susbench.tasks import load_tasks, select_tasks, task_types
from susbench.web import SITES


@pytest.fixture(scope="module")
def injections() -> dict[str, Injection]:
    return {injection.id: injection for injection in load_injections()}


@pytest.fixture(scope="module")
def tasks(injections: dict[str, Injection]) -> list[Task]:
    return load_tasks(injections=injections)


def test_catalog_covers_every_type_and_site(tasks: list[Task], injections: dict[str, Injection]) -> None:
    assert len(tasks) >= 40
    assert {kind for task in tasks for kind in task_types(task, injections)} == set(PATTERN_TYPES)
    assert {task.site for task in tasks} == {site.host for site in SITES}
    for task in tasks:
        assert [step.action for step in task.reference_path].count("decide") == 1, task.id
        assert task.capture is not None and task.completion is not None, task.id
        assert task.start_url.startswith(f"https://{task.site}/"), task.id


def test_selectors(tasks: list[Task], injections: dict[str, Injection]) -> None:
    assert select_tasks(tasks, "all", injections) == tasks
    one = tasks[0]
    assert select_tasks(tasks, one.id, injections) == [one]
    assert all(task.site == "voltcart.test" for task in select_tasks(tasks, "voltcart.test", injections))
    popups = select_tasks(tasks, "popup_ad", injections)
    assert popups and all("popup_ad" in task_types(task, injections) for task in popups)
    assert all(task.id.startswith("tunewave-") for task in select_tasks(tasks, "tunewave-*", injections))
    both = select_tasks(tasks, f"{one.id},voltcart.test", injections)
    assert one in both and len(both) == len(set(task.id for task in both))
    with pytest.raises(SusbenchError, match="matches no task"):
        select_tasks(tasks, "no-such-task", injections)


def test_task_errors_name_file_and_field(tmp_path: Path, injections: dict[str, Injection]) -> None:
    good = Path("tasks/voltcart-laptop-cart.yaml").read_text()
    (tmp_path / "a.yaml").write_text(good.replace("voltcart-item-protection-plan", "no-such-injection"))
    with pytest.raises(InputError, match=r"a\.yaml: field 'injections\.0': unknown injection id"):
        load_tasks(tmp_path, injections)
    (tmp_path / "a.yaml").write_text(good.replace("max_seconds: 90", "max_seconds: -1"))
    with pytest.raises(InputError, match=r"a\.yaml: field 'max_seconds'"):
        load_tasks(tmp_path, injections)


def test_plan_is_deterministic_and_seeded(tasks: list[Task], injections: dict[str, Injection]) -> None:
    options = RunOptions(operator="random", repeats=3, seed=5, control_rate=0.3, db=Path("x.duckdb"))
    first = plan_episodes("run-x", tasks, injections, options, "snapshot")
    again = plan_episodes("run-x", list(reversed(tasks)), injections, options, "snapshot")
    assert {job.episode for job in first} == {job.episode for job in again}
    assert len({job.episode.id for job in first}) == 3 * len(tasks)
    assert first[0].episode.id == episode_key("run-x", first[0].task.id, 0)
    controls = sum(job.episode.condition == "control" for job in first)
    assert 0.15 * len(first) < controls < 0.45 * len(first)
    picked = {job.episode.injection_id for job in first if job.task.id == "pizzapalace-margherita-order"}
    assert picked <= {"pizzapalace-checkout-app-required", "pizzapalace-checkout-dessert", None}
    other = plan_episodes("run-x", tasks, injections, options.model_copy(update={"seed": 6}), "snapshot")
    assert [job.episode.seed for job in other] != [job.episode.seed for job in first]


def test_run_identity_ignores_what_may_grow() -> None:
    base = dict(mode="snapshot", snapshot_sha256="ab", live_resolve=(), seed=0, control_rate=0.0)
    one = RunIdentity(operator="naive", susbench_version="1", **base)
    assert one.run_id() == RunIdentity(operator="naive", susbench_version="1", **base).run_id()
    assert one.run_id() != RunIdentity(operator="careful", susbench_version="1", **base).run_id()


def test_operator_registry() -> None:
    assert {"naive", "careful", "random", "idle"} <= set(OPERATORS)
    assert make_operator("random", 3).name == "random"
    with pytest.raises(SusbenchError, match="unknown operator 'gpt'; expected one of"):
        make_operator("gpt", 0)


def test_bad_run_input_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(SusbenchError, match="unknown operator"):
        run_benchmark(RunOptions(operator="nobody", db=tmp_path / "r.duckdb"), show_progress=False)
    with pytest.raises(SusbenchError, match="snapshot not found"):
        run_benchmark(
            RunOptions(operator="naive", snapshot=tmp_path / "none.wacz", db=tmp_path / "r.duckdb"),
            show_progress=False,
        )
    with pytest.raises(SusbenchError, match="does not exist"):
        run_benchmark(
            RunOptions(operator="naive", tasks="voltcart-laptop-cart", db=tmp_path / "no" / "r.duckdb"),
            show_progress=False,
        )
