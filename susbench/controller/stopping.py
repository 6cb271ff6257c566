"""Stopping a run on SIGINT or SIGTERM: both interrupt it like Ctrl-C, and the signal is remembered so the
command exits 128 + its number (130, 143), as shells and supervisors expect.

A running episode is let finish within its budget, except a person's: a person may take minutes,
so the pool tells the workers (`SEATED_STOP`) and a person's turn ends at once (`TurnStopped`),
to be scored and stored like a turn whose time ran out."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
SEATED_STOP = signal.SIGUSR1
"""Sent by the pool to its busy workers when the run is stopped."""


class _Asked:
    """The stop signal that came while `stopping_on_signals` was on, kept beside the exception it raised:
    a library that catches every exception (a query's own interrupt handling) may swallow that one."""

    signum: int | None = None


def raise_if_stopped() -> None:
    """For a wait that polls: raise `Stopped` if a stop signal came and its exception never arrived.

    Seen in a served study: SIGTERM right after the links were printed was lost on the way, and the
    session went on to show its consent screen, waiting for a person forever."""
    if _Asked.signum is not None:
        raise Stopped(_Asked.signum)


def stop_asked() -> int | None:
    """The stop signal that came in the running `stopping_on_signals` block, if one did: an error
    raised after it may be that stop in another library's words (DuckDB ends a query the signal
    interrupted with `RuntimeError: Query interrupted`)."""
    return _Asked.signum


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
        _Asked.signum = signum
        raise Stopped(signum)

    previous = {signum: signal.signal(signum, stop) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _Asked.signum = None


class TurnStopped(BaseException):
    """The run was stopped during a person's turn (a BaseException, like the budget's `Overtime`)."""


class _SeatedStop:
    """In a worker: whether the run asked to stop, and whether a person's turn is running now."""

    asked = False
    in_turn = False

    @classmethod
    def note(cls, signum: int, frame: FrameType | None) -> None:
        cls.asked = True
        if cls.in_turn:
            cls.in_turn = False
            raise TurnStopped


def listen_for_seated_stop() -> None:
    """In a worker process: `SEATED_STOP` marks the run as stopping (and ends a person's turn)."""
    signal.signal(SEATED_STOP, _SeatedStop.note)


@contextmanager
def seated_turn(seated: bool) -> Iterator[None]:
    """For a person's turn (`seated`): `TurnStopped` in the block once the run is stopped, at once
    if it already was."""
    if not seated:
        yield
        return
    if _SeatedStop.asked:
        raise TurnStopped
    _SeatedStop.in_turn = True
    try:
        yield
    finally:
        _SeatedStop.in_turn = False
