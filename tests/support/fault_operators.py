"""An operator under test for the fault tests, importable in worker processes as
`tests.support.fault_operators:Watching`.

It keeps reading the page until its budget is nearly spent, so an episode is under way long enough for
a fault to hit it, and it announces that it has started by creating a file in `$SUSBENCH_ACTING_DIR`
(when set), which is how a test knows the moment to strike.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from susbench.operators import OperatorResult, OperatorSettings, SubjectContext

ACTING_DIR = "SUSBENCH_ACTING_DIR"
POLL_S = 0.2
STOP_BEFORE_END_S = 1.0


class Watching:
    needs_cdp = False
    name = "watching"

    def __init__(self, settings: OperatorSettings) -> None:
        self.settings = settings

    def act(self, ctx: SubjectContext) -> OperatorResult:
        folder = os.environ.get(ACTING_DIR)
        if folder:
            Path(folder, f"{os.getpid()}-{time.time_ns()}").touch()
        reads = 0
        while ctx.remaining_s() > STOP_BEFORE_END_S:
            ctx.page.evaluate("document.title")
            reads += 1
            time.sleep(POLL_S)
        return OperatorResult(done=True, steps=0, message=f"read the page {reads} times")


def wait_for_acting(folder: Path, count: int = 1, timeout: float = 180.0) -> None:
    """Block until `count` episodes have started acting (their operators announced it)."""
    deadline = time.monotonic() + timeout
    while len(list(folder.iterdir())) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no operator started acting within {timeout:g} s")
        time.sleep(0.1)
