"""What the BrowserGym virtualenv registers: every task of every task set, and this install's paths.

`python -m susbench.browsergym.catalog` prints it as JSON; `import susbench_browsergym` asks it once,
so the gymnasium ids follow the task catalog of the install it drives.
"""

from __future__ import annotations

import json
import sys

from susbench.browser.chromium import find_chromium
from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks
from susbench.catalog.tasksets import TASK_SETS


def catalog() -> dict[str, object]:
    """Task ids with their task sets and limits, and the interpreter and Chromium of this install."""
    injections = {injection.id: injection for injection in load_injections()}
    tasks: dict[str, dict[str, object]] = {}
    for name, chosen in TASK_SETS.items():
        for task in load_tasks(chosen.tasks_dir, injections):
            entry = tasks.setdefault(task.id, {"task_sets": [], "max_steps": task.max_steps})
            entry["task_sets"].append(name)  # type: ignore[union-attr]
    return {"python": sys.executable, "chromium": str(find_chromium()), "tasks": tasks}


if __name__ == "__main__":
    print(json.dumps(catalog()))
