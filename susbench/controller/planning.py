"""Planning: every episode of a run in a fixed order, each drawing its choices from its own seeded RNG.

Episode keys are deterministic from the run's identity, the task and the repeat, and every
per-episode choice (control condition, operator seed) comes from a generator seeded by the run's
seed, the task and the repeat, so a killed run resumed with the same command plans exactly the same
episodes and skips the ones already stored. The injection is the task's first repeat's draw in every
repeat, so repeats are true replicates of one (task, injection), unless `redraw_injections` draws
it per repeat. `--control paired` adds, beside each injected episode, its control: the same task,
repeat, operator and seed, nothing injected, under a key of its own.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence

from susbench.catalog.tasks import drawable_injections
from susbench.controller.identity import episode_key
from susbench.controller.options import RunOptions
from susbench.core.models import Episode, Frozen, Injection, Task


class EpisodeJob(Frozen):
    """One planned episode, as sent to a worker."""

    episode: Episode
    task: Task
    step_timeout_s: float
    timeout_s: float


Planner = Callable[[str, Sequence[Task], Mapping[str, Injection], RunOptions], list[EpisodeJob]]
"""Plans a run's episodes from its run id, the selected tasks, the injection catalog and the options."""


def episode_job(episode: Episode, task: Task, options: RunOptions) -> EpisodeJob:
    """The job a worker runs for one planned episode, with the run's step and episode time limits."""
    timeout = options.episode_timeout_s or task.max_seconds
    return EpisodeJob(episode=episode, task=task, step_timeout_s=options.step_timeout_s, timeout_s=timeout)


def plan_episodes(
    run_id: str,
    tasks: Sequence[Task],
    injections: Mapping[str, Injection],
    options: RunOptions,
) -> list[EpisodeJob]:
    """All episodes of the run, repeat by repeat, in task order."""
    jobs = []
    for repeat in range(options.repeats):
        for task in tasks:
            rng = random.Random(f"{options.seed}\x1f{task.id}\x1f{repeat}")
            control = rng.random() < options.control_rate
            drawn = rng.choice(sorted(drawable_injections(task, options.tasks, injections)))
            operator_seed = rng.randrange(2**31)
            injection_id = drawn if options.redraw_injections else _first_draw(task, injections, options)
            injection = None if control else injections[injection_id]
            episode = Episode(
                id=episode_key(run_id, task.id, repeat),
                run_id=run_id,
                task_id=task.id,
                site=task.site,
                injection_id=None if injection is None else injection.id,
                pattern_type=None if injection is None else injection.type,
                condition="control" if control else "injected",
                operator=options.operator,
                mode=options.mode,
                repeat=repeat,
                seed=operator_seed,
            )
            jobs.append(episode_job(episode, task, options))
            if options.control == "paired" and not control:
                twin = episode.model_copy(
                    update={
                        "id": episode_key(run_id, task.id, repeat, paired_control=True),
                        "injection_id": None,
                        "pattern_type": None,
                        "condition": "control",
                    }
                )
                jobs.append(episode_job(twin, task, options))
    return jobs


def _first_draw(task: Task, injections: Mapping[str, Injection], options: RunOptions) -> str:
    """The injection the task's first repeat draws (its generator's second draw, after the control coin)."""
    rng = random.Random(f"{options.seed}\x1f{task.id}\x1f0")
    rng.random()
    return rng.choice(sorted(drawable_injections(task, options.tasks, injections)))
