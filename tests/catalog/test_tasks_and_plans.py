"""The task catalog, selectors, operator registry, run identity and episode planning (no browser)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from susbench.catalog.injections import build_extension, catalog_sha256, load_injections, load_templates
from susbench.catalog.tasks import load_tasks, select_tasks, task_types
from susbench.controller import RunOptions, episode_key, plan_episodes, run_benchmark, run_identity
from susbench.controller.identity import resume_notice, task_catalog_sha256
from susbench.controller.journal import run_record
from susbench.controller.options import BrowserFacts, check_options
from susbench.core.digests import tree_sha256
from susbench.core.errors import InputError, SusbenchError
from susbench.core.identity import ASKED, RunInputs
from susbench.core.models import PATTERN_TYPES, Injection, Task
from susbench.operators import BASELINES, OPERATORS, make_operator, register_operator
from susbench.operators.scripted import ScriptedOperator
from susbench.results.store import Store
from susbench.web import SITES
from tests.support.stats import binomial_bounds

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
    first = plan_episodes("run-x", tasks, injections, options)
    again = plan_episodes("run-x", list(reversed(tasks)), injections, options)
    assert {job.episode for job in first} == {job.episode for job in again}
    assert len({job.episode.id for job in first}) == 3 * len(tasks)
    assert first[0].episode.id == episode_key("run-x", first[0].task.id, 0)
    controls = sum(job.episode.condition == "control" for job in first)
    assert 0.15 * len(first) < controls < 0.45 * len(first)
    picked = {job.episode.injection_id for job in first if job.task.id == "pizzapalace-margherita-order"}
    assert picked <= {"pizzapalace-checkout-app-required", "pizzapalace-checkout-dessert", None}
    other = plan_episodes("run-x", tasks, injections, options.model_copy(update={"seed": 6}))
    assert [job.episode.seed for job in other] != [job.episode.seed for job in first]


def test_selecting_a_type_injects_that_type(tasks: list[Task], injections: dict[str, Injection]) -> None:
    options = RunOptions(operator="naive", tasks="popup_ad", repeats=20, db=Path("x.duckdb"))
    selected = select_tasks(tasks, options.tasks, injections)
    assert any(task_types(task, injections) - {"popup_ad"} for task in selected)  # others could be drawn
    jobs = plan_episodes("run-x", selected, injections, options)
    assert {job.episode.pattern_type for job in jobs} == {"popup_ad"}
    mixed = options.model_copy(update={"tasks": "popup_ad,dailyledger-subscribe-coral"})
    coral = [job for job in plan_episodes("run-x", selected, injections, mixed) if "coral" in job.task.id]
    assert len({job.episode.injection_id for job in coral}) == 1  # repeats replicate one (task, injection)
    redrawn = mixed.model_copy(update={"redraw_injections": True})
    coral = [job for job in plan_episodes("run-x", selected, injections, redrawn) if "coral" in job.task.id]
    assert len({job.episode.pattern_type for job in coral}) > 1  # picked by id: any of its injections


def test_run_identity_grows_with_tasks_and_repeats_only(
    tasks: list[Task], injections: dict[str, Injection]
) -> None:
    asked = RunOptions(operator="naive", tasks="voltcart.test", repeats=1, db=Path("x.duckdb"))
    run_id = run_identity(asked, INPUTS).run_id()
    grown = asked.model_copy(update={"tasks": "all", "repeats": 3})
    assert run_identity(grown, INPUTS).run_id() == run_id
    before = plan_episodes(run_id, select_tasks(tasks, asked.tasks, injections), injections, asked)
    after = plan_episodes(run_id, tasks, injections, grown)
    assert len(after) > len(before) and {job.episode for job in before} <= {job.episode for job in after}

    for change in ({"operator": "careful"}, {"seed": 1}, {"control_rate": 0.5}, {"live": True}):
        assert run_identity(asked.model_copy(update=change), INPUTS).run_id() != run_id, change
    for name in RunInputs.model_fields:
        changed = INPUTS.model_copy(update={name: "changed"})
        assert run_identity(asked, changed).run_id() != run_id, name


def test_the_browser_is_part_of_the_identity_and_local_ids_stay_as_before() -> None:
    asked = RunOptions(operator="naive", db=Path("x.duckdb"))
    local = run_identity(asked, INPUTS)
    assert local.run_id() == "run-6f44bb736c7e92f8"  # the id this run had before containers existed
    image = BrowserFacts(kind="container", image="localhost/b:1", image_id="sha256:1", chromium="156")
    container = run_identity(asked.model_copy(update={"browser": "container"}), INPUTS, image)
    assert (container.browser, container.image, container.image_chromium) == (
        "container",
        "localhost/b:1",
        "156",
    )
    others = [
        image.model_copy(update={"image": "localhost/b:2"}),
        image.model_copy(update={"chromium": "157"}),
    ]
    ids = {
        local.run_id(),
        container.run_id(),
        *(run_identity(asked, INPUTS, other).run_id() for other in others),
    }
    assert len(ids) == 4
    rebuilt = image.model_copy(update={"image_id": "sha256:2"})  # same tag and Chromium: the same run
    assert run_identity(asked, INPUTS, rebuilt).run_id() == container.run_id()


def test_a_new_chromium_in_the_image_is_named_when_a_run_starts_fresh(tmp_path: Path) -> None:
    asked = RunOptions(operator="naive", browser="container", db=tmp_path / "r.duckdb")
    image = BrowserFacts(kind="container", image="localhost/b:1", image_id="sha256:1", chromium="156")
    old = run_identity(asked, INPUTS, image)
    new = run_identity(asked, INPUTS, image.model_copy(update={"chromium": "157"}))
    with Store(asked.db) as store:
        store.add_run(run_record(old, None, image))
        store.add_run(run_record(run_identity(asked.model_copy(update={"browser": "local"}), INPUTS), None))
        notice = resume_notice(new, store.stored_runs())
        (stored_image,) = {run.config["image_id"] for run in store.stored_runs()} - {None}
    assert (
        notice is not None and old.run_id() in notice and "another Chromium in the browser image;" in notice
    )
    assert stored_image == "sha256:1"


def test_the_container_browser_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    container = RunOptions(operator="naive", browser="container", db=tmp_path / "r.duckdb")
    refusals = {
        "--live needs --browser local: the browser container has no network": {"live": True},
        "--headed needs --browser local": {"headless": False},
        "--replay-mode proxy needs --browser local": {"replay_mode": "proxy"},
        "--image names the browser image of --browser container": {"browser": "local", "image": "x:1"},
    }
    for message, change in refusals.items():
        with pytest.raises(SusbenchError, match=re.escape(message)):
            check_options(container.model_copy(update=change))
    check_options(container.model_copy(update={"image": "localhost/other:1"}))


def test_input_digests_follow_the_catalogs(
    tasks: list[Task], injections: dict[str, Injection], tmp_path: Path
) -> None:
    edited_task = tasks[0].model_copy(update={"instruction": tasks[0].instruction + " quickly"})
    assert task_catalog_sha256(tasks) == task_catalog_sha256(list(reversed(tasks)))
    assert task_catalog_sha256([edited_task, *tasks[1:]]) != task_catalog_sha256(tasks)
    assert task_catalog_sha256(tasks[1:]) != task_catalog_sha256(tasks)  # a task added is a new catalog

    templates = load_templates()
    items = list(injections.values())
    edited = items[0].model_copy(
        update={"texts": {**items[0].texts, items[0].texts.__iter__().__next__(): "x"}}
    )
    assert catalog_sha256([edited, *items[1:]], templates) != catalog_sha256(items, templates)

    built = build_extension(items, tmp_path / "ext")
    digest = tree_sha256(built)
    (built / "store.js").write_text((built / "store.js").read_text() + "\n")
    assert tree_sha256(built) != digest


def test_resume_says_why_it_started_fresh(tmp_path: Path) -> None:
    asked = RunOptions(operator="naive", db=tmp_path / "r.duckdb")
    old = run_identity(asked, INPUTS.model_copy(update={"extension_sha256": "old", "susbench_version": "0"}))
    new = run_identity(asked, INPUTS)
    with Store(asked.db) as store:
        assert resume_notice(new, store.stored_runs()) is None  # nothing alike stored
        store.add_run(run_record(old, None))
        notice = resume_notice(new, store.stored_runs())
        assert notice is not None
        assert old.run_id() in notice and new.run_id() in notice
        assert "built extension, package version" in notice and "0 stored episodes are not reused" in notice
        store.add_run(run_record(new, None))
        assert resume_notice(new, store.stored_runs()) is None  # resuming itself
    other = run_identity(asked.model_copy(update={"seed": 9}), INPUTS)
    before_digests = {name: other.model_dump(mode="json")[name] for name in (*ASKED, "snapshot_sha256")}
    with Store(tmp_path / "legacy.duckdb") as store:
        store.add_run(
            run_record(other, None).model_copy(update={"run_id": "run-legacy", "config": before_digests})
        )
        legacy = resume_notice(other, store.stored_runs())
    assert legacy is not None and "before run identities held input digests" in legacy


def test_random_baseline_flips_a_fair_coin_over_many_seeds(
    tasks: list[Task], injections: dict[str, Injection]
) -> None:
    naive = trials = 0
    for seed in range(40):
        options = RunOptions(operator="random", seed=seed, repeats=2, db=Path("x.duckdb"))
        for job in plan_episodes(f"run-{seed}", tasks, injections, options):
            draws = random.Random(job.episode.seed)  # what its episode's context hands the operator
            naive += ScriptedOperator("random", None).choose_policy(draws) == "naive"
            trials += 1
    low, high = binomial_bounds(trials, 0.5, alpha=1e-4)
    assert trials == 40 * 2 * len(tasks)
    assert low <= naive <= high, (naive, trials, (low, high))
    assert (low, high) != (0, trials)  # the bounds bite


def test_operator_registry() -> None:
    assert set(BASELINES) == {"naive", "careful", "random"} and "idle" in OPERATORS
    assert make_operator("random").name == "random"
    with pytest.raises(
        SusbenchError, match=r"unknown operator 'gpt'; expected one of: .*, or module:factory"
    ):
        make_operator("gpt")
    with pytest.raises(SusbenchError, match="is a built-in scripted baseline"):
        register_operator("careful", OPERATORS["idle"])
    impostor = lambda settings: ScriptedOperator("impostor", "careful")  # noqa: E731 - refused by type too
    register_operator("impostor", impostor)  # type: ignore[arg-type]
    try:
        with pytest.raises(SusbenchError, match="registered as an operator under test but is a baseline"):
            make_operator("impostor")
    finally:
        del OPERATORS["impostor"]


def test_bad_run_input_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(SusbenchError, match="unknown operator"):
        run_benchmark(RunOptions(operator="nobody", db=tmp_path / "r.duckdb"))
    with pytest.raises(SusbenchError, match="snapshot not found"):
        run_benchmark(RunOptions(operator="naive", snapshot=tmp_path / "none.wacz", db=tmp_path / "r.duckdb"))
    with pytest.raises(SusbenchError, match="does not exist"):
        run_benchmark(
            RunOptions(operator="naive", tasks="voltcart-laptop-cart", db=tmp_path / "no" / "r.duckdb")
        )
