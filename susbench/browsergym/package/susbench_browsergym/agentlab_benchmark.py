"""The `susbench` Benchmark for AgentLab: one EnvArgs per task, a `task_set` column to split by."""

from __future__ import annotations

from typing import Any

import pandas as pd
from browsergym.experiments.benchmark import Benchmark, HighLevelActionSetArgs
from browsergym.experiments.loop import EnvArgs

NAME = "susbench"
# What a person has on a shop's pages: element actions by bid, the chat, tabs and navigation.
ACTION_SUBSETS = ("chat", "infeas", "bid", "tab", "nav")


def make_benchmark(
    tasks: dict[str, dict[str, Any]], task_set: str | None = None, task_kwargs: dict[str, str] | None = None
) -> Benchmark:
    """All tasks, or one task set's (`susbench_<task set>`); episodes share one DuckDB, so not in
    parallel (`supports_parallel_seeds` false: AgentLab runs them one at a time per file)."""
    whole = Benchmark(
        name=NAME,
        high_level_action_set_args=HighLevelActionSetArgs(subsets=ACTION_SUBSETS),
        is_multi_tab=True,
        supports_parallel_seeds=False,
        backends=[],
        env_args_list=[
            EnvArgs(
                task_name=f"{NAME}.{task_id}",
                task_seed=0,
                max_steps=entry["max_steps"],
                headless=True,
                task_kwargs=task_kwargs or None,
            )
            for task_id, entry in sorted(tasks.items())
        ],
        task_metadata=pd.DataFrame(
            [
                {"task_name": f"{NAME}.{task_id}", "task_set": " ".join(entry["task_sets"])}
                for task_id, entry in sorted(tasks.items())
            ]
        ),
    )
    if task_set is None:
        return whole
    chosen = whole.subset_from_regexp("task_set", rf"(?:^| ){task_set}(?: |$)")
    if not chosen.env_args_list:
        raise ValueError(f"task set {task_set!r}: no such task set; expected one of the catalog's")
    chosen.name = f"{NAME}_{task_set}"
    return chosen
