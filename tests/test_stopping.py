"""Stop signals (`susbench.controller.stopping`): a SIGTERM whose exception something swallowed on the
way still stops a wait that polls (a served study once sat at its consent screen after SIGTERM)."""

from __future__ import annotations

import os
import signal

import pytest

from susbench.controller.stopping import Stopped, raise_if_stopped, stopping_on_signals


def test_a_stop_whose_exception_was_swallowed_is_raised_at_the_next_poll() -> None:
    swallowed: list[KeyboardInterrupt] = []
    with stopping_on_signals():
        try:
            os.kill(os.getpid(), signal.SIGTERM)  # the handler runs as soon as the call returns
        except KeyboardInterrupt as exc:
            swallowed.append(exc)  # as a library that catches everything would: it goes no further
        assert [type(exc) for exc in swallowed] == [Stopped]
        with pytest.raises(Stopped) as stopped:
            raise_if_stopped()
    assert stopped.value.signum == signal.SIGTERM


def test_no_stop_is_remembered_past_its_block() -> None:
    with stopping_on_signals(), pytest.raises(Stopped):
        os.kill(os.getpid(), signal.SIGINT)
    raise_if_stopped()  # nothing: the block that heard the signal is over
    with stopping_on_signals():
        raise_if_stopped()
