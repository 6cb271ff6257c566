"""`susbench web serve` from the command line: a port it cannot take is one line, as in `replay serve`."""

from __future__ import annotations

import socket

from tests.support.cli import run_cli


def test_a_busy_port_is_one_clear_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("web", "serve", "--port", str(port))
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line == f"error: cannot listen on 127.0.0.1:{port}: Address already in use"
