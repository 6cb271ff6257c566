"""An operator's time budget, enforced inside the worker so the evidence survives an overrun.

When the budget runs out, `Overtime` is raised in the operator's code wherever it is: sleeping,
waiting for a model server, or inside a Playwright call (Playwright's sync API cancels that call
and stays usable). The controller then still asks the extension for its signed verdict. Killing
the worker process is left to the pool as a last resort, for an operator that ignores even this.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Overtime(BaseException):
    """The operator's time budget ran out (a BaseException, so `except Exception` cannot swallow it)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"ran out of its {seconds:g} s budget")
        self.seconds = seconds


SLACK_S = 0.01


@contextmanager
def time_budget(seconds: float) -> Iterator[None]:
    """Raise `Overtime` in the block once `seconds` have passed.

    It uses SIGALRM, so it only works in the main thread; elsewhere it does nothing and the pool's
    kill is the only limit. An alarm armed outside (pytest-timeout's) is kept: if it is due first,
    its handler runs, and otherwise what is left of it is re-armed afterwards.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    started = time.monotonic()
    outer_fired = False

    def expire(signum: int, frame: FrameType | None) -> None:
        nonlocal outer_fired
        elapsed = time.monotonic() - started
        if elapsed >= seconds - SLACK_S:
            raise Overtime(seconds)
        outer_fired = True
        signal.setitimer(signal.ITIMER_REAL, seconds - elapsed)
        if callable(outer_handler):
            outer_handler(signum, frame)

    outer_delay, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    outer_handler = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer_delay or seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer_handler)
        if outer_delay and not outer_fired:
            left = outer_delay - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, SLACK_S), outer_interval)
