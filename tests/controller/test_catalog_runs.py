"""Catalog-wide runs on the real catalog files: `--task-set full` covers every task once, the
demo's subset follows its rule (balanced per source and type), the estimate says its basis, and the
split is part of the run identity and a filter of the report."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from susbench.analysis.results import group_results
from susbench.catalog.full import load_catalog
from susbench.catalog.injections import load_injections
from susbench.controller import RunOptions, run_identity
from susbench.controller.catalog_runs import (
    DEMO_PER_CELL,
    DEMO_SEED,
    MEASURED_EPISODE_S,
    demo_parts,
    estimate,
    full_parts,
)
from susbench.controller.planning import first_draw
from susbench.core.errors import SusbenchError
from susbench.core.models import PATTERN_TYPES, OutcomeKind, task_split
from susbench.results.store import Store
from tests.support.cli import run_cli
from tests.support.results import INPUTS, add_episode, add_run

INJECTIONS = {injection.id: injection for injection in load_injections()}
CATALOG = load_catalog(INJECTIONS)


def _ids(parts: list) -> list[str]:
    return [task.id for part in parts for task in part.tasks]


def test_full_covers_every_task_once_each_on_its_own_task_set() -> None:
    parts = full_parts(INJECTIONS)
    assert sorted(_ids(parts)) == sorted(entry.task.id for entry in CATALOG)
    assert len({part.task_set.name for part in parts}) == len(parts)
    test_only = full_parts(INJECTIONS, split="test")
    assert _ids(test_only) and all(task_split(task_id) == "test" for task_id in _ids(test_only))
    assert len(_ids(test_only)) == sum(entry.task.split == "test" for entry in CATALOG)


def test_full_keeps_each_selector_part_where_it_matches_and_refuses_one_that_matches_nothing() -> None:
    parts = full_parts(INJECTIONS, "voltcart-mouse-cart,olx-alto-chat")
    assert {part.task_set.name: part.selector for part in parts} == {
        "localweb": "voltcart-mouse-cart",
        "realpages": "olx-alto-chat",
    }
    popups = full_parts(INJECTIONS, "popup_ad")
    assert all(part.selector == "popup_ad" for part in popups) and len(popups) > 1
    with pytest.raises(SusbenchError, match="'no-such-task' matches no task of the full catalog"):
        full_parts(INJECTIONS, "voltcart-mouse-cart,no-such-task")


def test_the_demo_subset_is_its_rule_balanced_over_sources_and_types() -> None:
    parts = demo_parts(INJECTIONS, with_saved_pages=True)
    by_id = {entry.task.id: entry for entry in CATALOG}
    cells: Counter[tuple[str, str]] = Counter()
    candidates: Counter[tuple[str, str]] = Counter()
    for entry in CATALOG:
        drawn = INJECTIONS[first_draw(entry.task, INJECTIONS, DEMO_SEED, entry.task.id)].type
        candidates[(entry.source, drawn)] += 1
    for task_id in _ids(parts):
        entry = by_id[task_id]
        cells[(entry.source, INJECTIONS[first_draw(entry.task, INJECTIONS, DEMO_SEED, task_id)].type)] += 1
    assert {source for source, _ in cells} == {"synthetic", "real app", "saved page"}
    assert {pattern for _, pattern in cells} == set(PATTERN_TYPES)
    for cell, available in candidates.items():
        assert cells[cell] == min(DEMO_PER_CELL, available), cell
    without = demo_parts(INJECTIONS, with_saved_pages=False)
    assert {part.task_set.source for part in without} == {"synthetic", "real app"}


def test_the_estimate_names_its_basis() -> None:
    parts = full_parts(INJECTIONS, "voltcart.test,oscar-mug-order")
    episodes = sum(len(part.tasks) for part in parts)
    measured = estimate("careful", parts, parallel=2)
    assert measured.episodes == episodes and not measured.bound
    assert measured.seconds == pytest.approx(episodes * MEASURED_EPISODE_S["careful"] / 2 + 15.0 * len(parts))
    stored = estimate("careful", parts, parallel=2, stored_mean_s=10.0, stored_episodes=40)
    assert stored.seconds > measured.seconds and "40 episodes in this database" in stored.basis
    agent = estimate("openai-chat", parts, parallel=1, repeats=2)
    assert agent.bound and agent.episodes == 2 * episodes and "max_seconds" in agent.basis


def test_the_split_is_part_of_the_run_identity_and_all_keeps_stored_ids() -> None:
    whole = run_identity(RunOptions(operator="careful"), INPUTS)
    held_out = run_identity(RunOptions(operator="careful", split="test"), INPUTS)
    assert whole.run_id() != held_out.run_id()
    assert "split" not in whole.model_dump(exclude={"split"})
    # A run stored before the split existed had no such field: its id is the one of `all`.
    legacy = whole.model_dump(mode="json", exclude={"split"})
    assert type(whole).model_validate(legacy).run_id() == whole.run_id()


def test_report_split_keeps_the_episodes_of_that_splits_tasks(tmp_path: Path) -> None:
    with Store(tmp_path / "r.duckdb") as store:
        add_run(store, "run-a", "careful")
        add_run(store, "run-b", "naive", split="test")
        for task in ("shop-a", "shop-b", "shop-c"):
            add_episode(store, "run-a", "careful", task, OutcomeKind.AVOIDED)
        add_episode(store, "run-b", "naive", "shop-b", OutcomeKind.NOT_AVOIDED)
    with Store(tmp_path / "r.duckdb", read_only=True) as store:
        (everything,) = group_results(store)
        (test,) = group_results(store, split="test")
        (dev,) = group_results(store, split="dev")
    assert everything.splits == {"dev": 2, "test": 2} and "splits dev + test" in everything.label
    assert {episode.task_id for episode in test.episodes} == {"shop-b"} and "split test" in test.label
    assert {episode.operator for episode in test.episodes} == {"careful", "naive"}  # one group
    assert {episode.task_id for episode in dev.episodes} == {"shop-a", "shop-c"}


def test_a_catalog_wide_run_refuses_one_snapshot_or_a_selector_matching_nothing() -> None:
    refused = run_cli("run", "--task-set", "full", "--operator", "careful", "--snapshot", "x.wacz")
    assert refused.returncode == 2
    assert "--task-set full replays each task set from its own snapshot" in refused.stderr
    unknown = run_cli("run", "--task-set", "full", "--operator", "careful", "--tasks", "no-such-task")
    assert unknown.returncode == 2 and "'no-such-task' matches no task of the full catalog" in unknown.stderr
