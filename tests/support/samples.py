"""Stated samples of catalogs that grow with the benchmark: tests walk these and a full
`susbench run` walks everything, so CI time stays flat as sites and tasks are added."""

from __future__ import annotations

from collections.abc import Mapping

from susbench.controller.planning import first_draw
from susbench.core.models import Injection, Task
from susbench.web.catalog import SiteSpec, load_catalog


def sites_per_category() -> list[SiteSpec]:
    """The first site of each category, in catalog order."""
    chosen: dict[str, SiteSpec] = {}
    for spec in load_catalog().sites:
        chosen.setdefault(spec.category, spec)
    return list(chosen.values())


def sites_per_look() -> list[SiteSpec]:
    """The first site of each category, then the first site of each look choice (header, grid,
    buttons, scheme, hero, detail layout) no chosen site shows yet."""
    chosen = sites_per_category()
    shown = {choice for spec in chosen for choice in spec.look.classes().split()}
    for spec in load_catalog().sites:
        new = set(spec.look.classes().split()) - shown
        if new:
            chosen.append(spec)
            shown |= new
    return chosen


def flow(task: Task) -> tuple[str, ...]:
    """A task's flow: its reference path's actions, without selectors and values."""
    return tuple(step.action for step in task.reference_path)


def tasks_per_flow_and_category(tasks: list[Task]) -> list[Task]:
    """The first task (by id) of each flow, then the first of each site category not yet chosen."""
    categories = {spec.host: spec.category for spec in load_catalog().sites}
    ordered = sorted(tasks, key=lambda task: task.id)
    chosen: dict[tuple[str, ...], Task] = {}
    for task in ordered:
        chosen.setdefault(flow(task), task)
    covered = {categories[task.site] for task in chosen.values()}
    for task in ordered:
        if categories[task.site] not in covered:
            chosen[(task.id,)] = task
            covered.add(categories[task.site])
    return sorted(chosen.values(), key=lambda task: task.id)


def tasks_per_drawn_type(tasks: list[Task], injections: Mapping[str, Injection], seed: int = 0) -> list[Task]:
    """The first task (by id) of each pattern type an episode of the tasks draws: a run injects one
    of a task's injections per episode (`first_draw`), so this sample shows every type a run of all
    the tasks with that seed shows."""
    chosen: dict[str, Task] = {}
    for task in sorted(tasks, key=lambda task: task.id):
        chosen.setdefault(injections[first_draw(task, injections, seed, task.id)].type, task)
    return sorted(chosen.values(), key=lambda task: task.id)
