"""SusBench Replay's tasks as BrowserGym environments; importing this registers them.

    import gymnasium as gym
    import susbench_browsergym
    env = gym.make("browsergym/susbench.voltcart-mouse-cart")   # BrowserEnv's interface, unchanged
    obs, info = env.reset(seed=0)                               # info["task_info"]["episode_id"]

`benchmark()` is the `susbench` Benchmark for AgentLab (`benchmark("realpages")`: one task set).
Each episode is stored in SusBench's DuckDB (task kwarg `db`, else $SUSBENCH_BROWSERGYM_DB, else
./susbench-browsergym.duckdb) under the operator `browsergym:<agent>` (task kwarg `agent`, else
$SUSBENCH_BROWSERGYM_AGENT).
"""

from __future__ import annotations

from functools import partial

import gymnasium as gym
from browsergym.core.registration import frozen_partial

from susbench_browsergym.env import SusbenchEnv
from susbench_browsergym.host import catalog
from susbench_browsergym.task import SusbenchTask

PREFIX = "susbench."


def _register(task_id: str, task_set: str) -> None:
    # BrowserGym's register_task always builds a plain BrowserEnv; this is the same registration with
    # SusbenchEnv, the task id frozen and the other task kwargs open to `gym.make(..., task_kwargs=)`.
    entry = partial(frozen_partial(SusbenchTask, task_id=task_id), task_set=task_set)
    gym.register(
        id=f"browsergym/{PREFIX}{task_id}",
        entry_point=lambda *args, **kwargs: SusbenchEnv(entry, *args, **kwargs),
        nondeterministic=True,
    )


def task_names() -> list[str]:
    """`susbench.<task id>` for every task, as BrowserGym names them (without `browsergym/`)."""
    return [f"{PREFIX}{task_id}" for task_id in sorted(catalog()["tasks"])]


def benchmark(task_set: str | None = None, agent: str | None = None, db: str | None = None):
    """The `susbench` Benchmark (all tasks), or `susbench_<task set>`: one EnvArgs per task, seed 0;
    `agent` and `db` become every task's kwargs (the operator's name, the DuckDB file)."""
    from susbench_browsergym.agentlab_benchmark import make_benchmark

    kwargs = {key: value for key, value in (("agent", agent), ("db", db)) if value is not None}
    return make_benchmark(catalog()["tasks"], task_set, kwargs)


for _task_id, _entry in catalog()["tasks"].items():
    _register(_task_id, _entry["task_sets"][0])

__all__ = ["SusbenchEnv", "SusbenchTask", "benchmark", "task_names"]
