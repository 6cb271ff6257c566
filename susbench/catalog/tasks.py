"""The task catalog (`tasks/*.yaml`, one task per file) and task selectors.

A selector is what a user types after `--tasks`: `all`, a task id, a site host, a pattern type or a
glob over task ids. Tasks refer to injections by id, so the catalog is checked against the
injection catalog: an unknown id or an injection on another site is an error naming the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from susbench.core.errors import InputError, SusbenchError
from susbench.core.loading import load_model
from susbench.core.models import PATTERN_TYPES, Injection, Task
from susbench.core.paths import TASKS_DIR
from susbench.core.urlpattern import glob_matches


def task_files(folder: Path = TASKS_DIR) -> list[Path]:
    return sorted(folder.glob("*.yaml"))


def task_target(target: str, folder: Path = TASKS_DIR) -> str:
    """A record target as given, or, when it is neither a URL nor a file here, the file of the task
    with that id in the catalog: `susbench record pizzapalace-margherita-order` works from any folder."""
    if "://" in target or Path(target).exists():
        return target
    for path in task_files(folder):
        if load_model(path, Task).id == target:
            return str(path)
    return target


def load_tasks(folder: Path = TASKS_DIR, injections: Mapping[str, Injection] | None = None) -> list[Task]:
    """Every task below `folder`, sorted by id; ids unique, injections known and on the task's site."""
    if not folder.is_dir():
        raise SusbenchError(f"{folder}: no task folder there; expected a folder of task YAML files")
    tasks: list[Task] = []
    seen: dict[str, Path] = {}
    for path in task_files(folder):
        task = load_model(path, Task)
        if task.id in seen:
            raise InputError(f"{path}: field 'id': {task.id!r} is already used by {seen[task.id]}")
        seen[task.id] = path
        if injections is not None:
            check_task(path, task, injections)
        tasks.append(task)
    return sorted(tasks, key=lambda task: task.id)


def check_task(source: Path | str, task: Task, injections: Mapping[str, Injection]) -> None:
    """A task's injections must exist and live on its site (or fit any site: generic ones); its path
    has exactly one decision."""
    for index, injection_id in enumerate(task.injections):
        injection = injections.get(injection_id)
        if injection is None:
            raise InputError(f"{source}: field 'injections.{index}': unknown injection id {injection_id!r}")
        if injection.site not in (task.site, "*"):
            raise InputError(
                f"{source}: field 'injections.{index}': {injection_id!r} is on {injection.site}, "
                f"expected an injection on {task.site}"
            )
    pages = {injections[injection_id].page.url for injection_id in task.injections}
    if len(pages) > 1:
        raise InputError(
            f"{source}: field 'injections': expected injections on one page (the decision point), "
            f"got {sorted(pages)}"
        )
    if task.reference_path and sum(step.action == "decide" for step in task.reference_path) != 1:
        raise InputError(f"{source}: field 'reference_path': expected exactly one 'decide' step")


def task_types(task: Task, injections: Mapping[str, Injection]) -> set[str]:
    return {injections[i].type for i in task.injections if i in injections}


def _parts(selector: str) -> list[str]:
    return [piece.strip() for piece in selector.split(",")]


Selectable = TypeVar("Selectable", Task, Injection)


def select_matching(
    items: Sequence[Selectable],
    selector: str,
    matching: Callable[[str], list[Selectable]],
    unmatched: Callable[[str], str],
) -> list[Selectable]:
    """The items one or more comma-separated parts of `selector` match, in catalog order, each once;
    a part that matches none is refused with `unmatched(part)`, which says what was expected."""
    chosen: set[str] = set()
    for part in _parts(selector):
        matched = matching(part)
        if not matched:
            raise SusbenchError(unmatched(part))
        chosen.update(item.id for item in matched)
    return [item for item in items if item.id in chosen]


def select_tasks(tasks: Iterable[Task], selector: str, injections: Mapping[str, Injection]) -> list[Task]:
    """Tasks matching one or more comma-separated selectors, in catalog order, each once."""
    tasks = list(tasks)
    example = tasks[0].site if tasks else "pizzapalace.test"
    return select_matching(
        tasks,
        selector,
        lambda part: _match(tasks, part, injections),
        lambda part: (
            f"--tasks {part!r} matches no task; expected 'all', a task id, a site host (e.g. {example}), "
            f"a pattern type ({', '.join(PATTERN_TYPES)}) or a glob over task ids"
        ),
    )


def drawable_injections(task: Task, selector: str, injections: Mapping[str, Injection]) -> tuple[str, ...]:
    """The task's injections an episode may draw: only those of the named pattern types when the
    selector picked the task by type alone (`--tasks popup_ad` means a pop-up is injected), else all."""
    parts = _parts(selector)
    if any(_match([task], part, injections) for part in parts if part not in PATTERN_TYPES):
        return task.injections
    named = {part for part in parts if part in PATTERN_TYPES}
    return tuple(item for item in task.injections if item in injections and injections[item].type in named)


def _match(tasks: list[Task], part: str, injections: Mapping[str, Injection]) -> list[Task]:
    if part == "all":
        return tasks
    if part in PATTERN_TYPES:
        return [task for task in tasks if part in task_types(task, injections)]
    if any(task.site == part for task in tasks):
        return [task for task in tasks if task.site == part]
    return [task for task in tasks if glob_matches(part, task.id)]


def complete_tasks(incomplete: str) -> list[str]:
    """Shell completion of `--tasks`, comma-separated selectors: the last one, after the ones before it.

    A broken catalog must not break the shell, so one that fails to load completes nothing.
    """
    done, _, last = incomplete.rpartition(",")
    prefix = f"{done}," if done else ""
    try:
        tasks = load_tasks()
    except SusbenchError:
        return []
    selectors = ["all", *PATTERN_TYPES, *sorted({task.site for task in tasks}), *(task.id for task in tasks)]
    return [prefix + selector for selector in selectors if selector.startswith(last)]
