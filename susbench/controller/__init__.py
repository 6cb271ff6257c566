"""The controller: plans a run's episodes, runs each in a fresh browser on an executor, stores them.

options.py      what was asked, checked once           identity.py  episode keys, why a run starts fresh
planning.py     episodes and their seeded choices       pool.py      the local worker processes
episode.py      one episode in one browser              traffic.py   replay or live, per episode
journal.py      the run's reproducibility record        run.py       the orchestration
budget.py       the operator's time budget, in the worker
browsers.py     a worker's browsers: local, or a warm container
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from susbench.core.lazy import lazy_names

if TYPE_CHECKING:
    from susbench.controller.identity import episode_key
    from susbench.controller.options import RunOptions, default_snapshot
    from susbench.controller.planning import EpisodeJob, plan_episodes
    from susbench.controller.pool import EpisodeExecutor, ExecutorFactory, LocalProcessPool
    from susbench.controller.run import RunObserver, RunSummary, run_benchmark, run_identity

__getattr__ = lazy_names(
    __name__,
    {
        "identity": ("episode_key",),
        "options": (
            "RunOptions",
            "default_snapshot",
        ),
        "planning": (
            "EpisodeJob",
            "plan_episodes",
        ),
        "pool": (
            "EpisodeExecutor",
            "ExecutorFactory",
            "LocalProcessPool",
        ),
        "run": (
            "RunObserver",
            "RunSummary",
            "run_benchmark",
            "run_identity",
        ),
    },
)

__all__ = [
    "EpisodeExecutor",
    "EpisodeJob",
    "ExecutorFactory",
    "LocalProcessPool",
    "RunObserver",
    "RunOptions",
    "RunSummary",
    "default_snapshot",
    "episode_key",
    "plan_episodes",
    "run_benchmark",
    "run_identity",
]
