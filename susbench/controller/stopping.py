"""Stopping a run on SIGINT or SIGTERM: both interrupt it like Ctrl-C, and the signal is remembered so the
command exits 128 + its number (130, 143), as shells and supervisors expect."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopped(KeyboardInterrupt):
    """A stop signal arrived; `signum` says which."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def stop_signal(exc: KeyboardInterrupt) -> int:
    """The signal behind an interrupt (a plain KeyboardInterrupt is Ctrl-C's SIGINT)."""
    return exc.signum if isinstance(exc, Stopped) else int(signal.SIGINT)


@contextmanager
def stopping_on_signals(notice: str | None = None) -> Iterator[None]:
    """Raise `Stopped` in the main thread on SIGINT or SIGTERM while the block runs (elsewhere: no-op).

    `notice` goes to stderr when the signal arrives: the drain that follows takes seconds, and a
    person who pressed Ctrl-C should not wonder whether it was heard."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        if notice:
            print(notice, file=sys.stderr, flush=True)
        raise Stopped(signum)

    previous = {signum: signal.signal(signum, stop) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
