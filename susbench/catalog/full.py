"""The full catalog: every named task set's tasks together, each with its source, and the rule that
keeps it free of padding.

No padding: two tasks count as one when they have the same site, the same set of injections and
the same flow. A flow is the reference path's actions with the selector (or link text) each acts
on; what is typed or chosen (`fill` and `select` values), where a `goto` leads and the URL a
selector names (`a[href="/item/buffalo-wings"]` is `a[href]`) are left out, so a task that differs
from another only in its product, the goal's wording or the values it fills in is the same task.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping

from susbench.catalog.tasks import load_tasks, task_types
from susbench.catalog.tasksets import TASK_SETS, Source, TaskSet
from susbench.core.errors import InputError
from susbench.core.models import Frozen, Injection, Step, Task

URL_ATTRIBUTE = re.compile(r"\[(href|src|action)\s*[~|^$*]?=\s*(\"[^\"]*\"|'[^']*'|[^\]]*)\]")


class CatalogTask(Frozen):
    """A task of the full catalog, with the task set it belongs to and where its pages come from."""

    task: Task
    task_set: str
    source: Source
    types: tuple[str, ...]


def catalog_sets() -> list[TaskSet]:
    """The named task sets that make up the full catalog: the local web, each app, the saved pages."""
    return list(TASK_SETS.values())


def load_catalog(injections: Mapping[str, Injection]) -> list[CatalogTask]:
    """Every task of every named task set, checked against `injections`; a task id used in two sets
    is refused (episodes and the split are keyed by it)."""
    seen: dict[str, str] = {}
    entries = []
    for chosen in catalog_sets():
        for task in load_tasks(chosen.tasks_dir, injections):
            if task.id in seen:
                raise InputError(
                    f"{chosen.tasks_dir}: task id {task.id!r} is used by the task set {seen[task.id]!r} too; "
                    "expected ids unique over the whole catalog"
                )
            seen[task.id] = chosen.name
            types = tuple(sorted(task_types(task, injections)))
            entries.append(CatalogTask(task=task, task_set=chosen.name, source=chosen.source, types=types))
    return entries


def _flow_step(step: Step) -> str:
    if step.action == "goto":
        return "goto"
    target = URL_ATTRIBUTE.sub(r"[\1]", step.selector) if step.selector is not None else f"text={step.text}"
    return f"{step.action} {target}"


def flow(task: Task) -> tuple[str, ...]:
    """The task's flow as the no-padding rule compares it: each reference step's action and target,
    without fill/select values, goto URLs or the URLs selectors name."""
    return tuple(_flow_step(step) for step in task.reference_path)


def padding_key(task: Task) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """What makes a task distinct: its site, its set of injections and its flow."""
    return task.site, tuple(sorted(set(task.injections))), flow(task)


def padded_groups(tasks: Iterable[Task]) -> list[tuple[str, ...]]:
    """Groups of task ids that the no-padding rule counts as one task (each group sorted, two or more)."""
    by_key: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[str]] = defaultdict(list)
    for task in tasks:
        by_key[padding_key(task)].append(task.id)
    return sorted(tuple(sorted(ids)) for ids in by_key.values() if len(ids) > 1)
