"""Stop signals (`susbench.controller.stopping`): a SIGTERM whose exception something swallowed on the
way still stops a wait that polls (a served study once sat at its consent screen after SIGTERM)."""

from __future__ import annotations

import os
import signal
import threading

import duckdb
import pytest

from susbench.controller.stopping import Stopped, raise_if_stopped, stop_asked, stopping_on_signals


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


def test_a_stop_that_a_query_turned_into_its_own_error_is_still_known() -> None:
    """DuckDB ends a query the signal interrupted with its own error, not ours; the stop is kept."""
    connection = duckdb.connect()
    with stopping_on_signals():
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM)).start()
        with pytest.raises(RuntimeError, match="Query interrupted"):
            connection.execute("SELECT count(*) FROM range(100000000000)").fetchall()
        assert stop_asked() == signal.SIGTERM
    assert stop_asked() is None
