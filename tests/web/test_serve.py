"""`susbench web serve` from the command line: a port it cannot take is one line, as in `replay serve`;
without `--date` it serves the documented default date, as `run --live` does."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from susbench.controller.options import RunOptions
from susbench.controller.run import served_date
from susbench.web.edition import DEFAULT_DATE
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


def test_serve_and_a_live_run_without_a_date_serve_the_documented_date() -> None:
    assert DEFAULT_DATE.isoformat() == "2026-11-29"  # the date of docs/session.md's `web serve`
    code = "from susbench.cli.main import main; main()"
    serving = subprocess.Popen(
        [sys.executable, "-c", code, "web", "serve", "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert serving.stdout is not None
        first = serving.stdout.readline()
    finally:
        serving.kill()
        serving.wait(timeout=30)
    assert first.startswith("Local web on 127.0.0.1:")
    assert first.rstrip().endswith("(date 2026-11-29, seed 0)")
    live = RunOptions(operator="naive", live=True, db=Path("x.duckdb"))
    assert served_date(live).live_date == DEFAULT_DATE
