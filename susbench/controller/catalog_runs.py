"""Runs over several task sets at once: `--task-set full` (every task of the catalog) and `--task-set
demo` (the demo's balanced subset), each task set on its own snapshot, and how long they will take.

The demo's subset is a rule over the catalog, so it stays balanced as the catalog grows: for each
source (the synthetic local web, the real apps, the saved real pages) and each pattern type, the
`DEMO_PER_CELL` tasks whose injection at the demo's seed is of that type, in the order of their ids'
sha256 (the split's hash: no site or name comes first by its spelling). The saved pages take part
when their data is there (their snapshot is built from ../shared, never bundled).

The time a run will take is estimated from the operator's mean episode time: its stored episodes in
the results database when it has some, else the baselines' means measured on the full catalog
(benchmarks/catalog_full.py; the figures and the machine's load are in benchmarks/results/), else
for another operator only a bound, the tasks' own time budgets.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import Field

from susbench.catalog.full import catalog_sets
from susbench.catalog.tasks import load_tasks, select_tasks
from susbench.catalog.tasksets import FULL, REALPAGES, TaskSet, realdata_folder
from susbench.controller.planning import first_draw
from susbench.core.errors import SusbenchError
from susbench.core.models import PATTERN_TYPES, Frozen, Injection, SplitChoice, Task
from susbench.results.store import Store

# One per (source, type): each task set is a run of its own per operator and a run's start costs
# 15-28 s here, so 27 tasks on five task sets take about what the local web's 44 took in one run.
DEMO_PER_CELL = 1
DEMO_SEED = 0
# Mean seconds one episode took, per scripted baseline, on the full catalog (benchmarks/catalog_full.py,
# 2 cores, two episodes at once, a shared machine: see benchmarks/results/catalog-full-*.md).
MEASURED_EPISODE_S = {"careful": 3.7, "naive": 6.1, "random": 3.7}
# Starting a run's browsers and its snapshot's replayer, per task set (measured beside the above).
RUN_START_S = 15.0
MIN_STORED_EPISODES = 5


class CatalogPart(Frozen):
    """One task set of a catalog-wide run, with the `--tasks` selector it runs there."""

    task_set: TaskSet
    selector: str
    tasks: tuple[Task, ...] = Field(description="the tasks the selector picks in this set (split applied)")

    def in_split(self, split: SplitChoice) -> CatalogPart:
        """This part with only the tasks of `split`, each named in the selector."""
        kept = tuple(_in_split(self.tasks, split))
        if kept == self.tasks:
            return self
        return self.model_copy(update={"tasks": kept, "selector": ",".join(task.id for task in kept)})

    @property
    def label(self) -> str:
        count = len(self.tasks)
        return f"{self.task_set.name} ({self.task_set.source}): {count} task{'s' * (count != 1)}"


class Estimate(Frozen):
    """How long a run will take, and on what the figure rests."""

    episodes: int
    seconds: float
    basis: str
    bound: bool = Field(default=False, description="an upper bound (the tasks' budgets), not a mean")


def _id_hash(task_id: str) -> str:
    return hashlib.sha256(task_id.encode()).hexdigest()


def _in_split(tasks: Sequence[Task], split: SplitChoice) -> list[Task]:
    return [task for task in tasks if split in ("all", task.split)]


def _selected(
    tasks: list[Task], selector: str, injections: Mapping[str, Injection]
) -> tuple[str, list[Task]]:
    """The parts of a comma-separated selector that match in `tasks`, and what they pick."""
    kept = []
    for part in (piece.strip() for piece in selector.split(",")):
        try:
            select_tasks(tasks, part, injections)
        except SusbenchError:
            continue
        kept.append(part)
    if not kept:
        return "", []
    joined = ",".join(kept)
    return joined, select_tasks(tasks, joined, injections)


def full_parts(
    injections: Mapping[str, Injection], selector: str = "all", split: SplitChoice = "all"
) -> list[CatalogPart]:
    """Every task set with a task the selector picks in the split; a selector part that picks
    nothing anywhere is refused, as `--tasks` always does."""
    parts = []
    matched: set[str] = set()
    for chosen in catalog_sets():
        tasks = load_tasks(chosen.tasks_dir, injections)
        joined, picked = _selected(tasks, selector, injections)
        matched.update(joined.split(","))
        picked = _in_split(picked, split)
        if picked:
            parts.append(CatalogPart(task_set=chosen, selector=joined, tasks=tuple(picked)))
    unmatched = [part.strip() for part in selector.split(",") if part.strip() not in matched]
    if unmatched:
        raise SusbenchError(
            f"--tasks {unmatched[0]!r} matches no task of the full catalog; expected 'all', a task id, a "
            "site host, a pattern type or a glob over task ids"
        )
    if not parts:
        raise SusbenchError(f"--task-set {FULL} --split {split}: no selected task is in that split")
    return parts


def demo_parts(
    injections: Mapping[str, Injection], with_saved_pages: bool | None = None
) -> list[CatalogPart]:
    """The demo's balanced subset by the rule above, as task ids per task set."""
    if with_saved_pages is None:
        with_saved_pages = saved_pages_available()
    by_cell: dict[tuple[str, str], list[tuple[str, str]]] = {}
    tasks_of: dict[str, list[Task]] = {}
    for chosen in catalog_sets():
        if chosen.name == REALPAGES and not with_saved_pages:
            continue
        tasks_of[chosen.name] = load_tasks(chosen.tasks_dir, injections)
        for task in tasks_of[chosen.name]:
            drawn = injections[first_draw(task, injections, DEMO_SEED, task.id)].type
            by_cell.setdefault((chosen.source, drawn), []).append((_id_hash(task.id), task.id))
    picked = {
        task_id
        for (_, pattern_type), cell in by_cell.items()
        if pattern_type in PATTERN_TYPES
        for _, task_id in sorted(cell)[:DEMO_PER_CELL]
    }
    parts = []
    for chosen in catalog_sets():
        chosen_tasks = tuple(task for task in tasks_of.get(chosen.name, ()) if task.id in picked)
        if chosen_tasks:
            selector = ",".join(task.id for task in chosen_tasks)
            parts.append(CatalogPart(task_set=chosen, selector=selector, tasks=chosen_tasks))
    return parts


def saved_pages_available() -> bool:
    """The saved real pages' data is there to build their snapshot from."""
    try:
        realdata_folder()
    except SusbenchError:
        return False
    return True


def estimate(
    operator: str,
    parts: Sequence[CatalogPart],
    parallel: int,
    repeats: int = 1,
    stored_mean_s: float | None = None,
    stored_episodes: int = 0,
) -> Estimate:
    """Wall time: episodes × mean episode time / episodes at once, plus each task set's start."""
    tasks = [task for part in parts for task in part.tasks]
    episodes = len(tasks) * repeats
    start = len(parts) * RUN_START_S
    if stored_mean_s is not None and stored_episodes >= MIN_STORED_EPISODES:
        mean, basis = stored_mean_s, f"the mean of {operator}'s {stored_episodes} episodes in this database"
    elif operator in MEASURED_EPISODE_S:
        mean = MEASURED_EPISODE_S[operator]
        basis = f"{operator}'s mean episode time on the full catalog, measured by benchmarks/catalog_full.py"
    else:
        budget = sum(task.max_seconds for task in tasks) * repeats
        return Estimate(
            episodes=episodes,
            seconds=budget / parallel + start,
            basis=f"no episode of {operator} is stored yet: at most the tasks' time budgets (max_seconds)",
            bound=True,
        )
    return Estimate(episodes=episodes, seconds=episodes * mean / parallel + start, basis=basis)


def describe_estimate(found: Estimate, parallel: int, parts: int) -> str:
    minutes = found.seconds / 60
    when = f"at most {minutes:.0f} min" if found.bound else f"about {minutes:.0f} min"
    return (
        f"{found.episodes} episodes on {parts} task set{'s' * (parts != 1)}, {parallel} at once: {when} "
        f"(basis: {found.basis})"
    )


def stored_episode_time(db: Path, operator: str) -> tuple[float | None, int]:
    """The mean duration of the operator's stored episodes in `db` (none when it does not exist)."""
    if not db.is_file():
        return None, 0
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT avg(duration_s), count(*) FROM episode_outcomes "
            "WHERE operator = ? AND outcome != 'error'",
            (operator,),
        )
    mean, count = rows[0]
    return (None if mean is None else float(mean)), int(count)
