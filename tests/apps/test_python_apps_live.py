"""The Python apps (django-oscar and pretix, installed by `make apps`) served live: a flow recorded
with `susbench record` through the front and replayed offline with nothing reaching the app; a
database edited by hand is caught by the content digest. For oscar also: an app killed
mid-recording leaves no snapshot; a busy port and a missing install are named with the app and
what to run."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest

from susbench.apps import AppError, ServedApp, driver, serve_app
from susbench.core.paths import REPO_ROOT
from tests.support.apps import record_through_front, replay_offline
from tests.support.cli import run_cli

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]  # app starts and recordings on a busy machine

DAY = date(2026, 12, 7)


@dataclass(frozen=True)
class Case:
    """One app: a whole flow to record, and a price to edit by hand in its SQLite database."""

    app: str
    task: str
    pages: int  # at least this many pages in the flow
    price: str  # SELECT of the price's current value
    edit: str  # UPDATE setting it to ? (the value)
    item: str  # the content key the digest names


CASES = [
    Case(
        "oscar",
        "oscar-skillet-order",
        6,
        "SELECT price FROM partner_stockrecord WHERE partner_sku = 'FH0003'",
        "UPDATE partner_stockrecord SET price = ? WHERE partner_sku = 'FH0003'",
        "product:cast-iron-skillet",
    ),
    Case(
        "pretix",
        "pretix-cliff-walk-family",
        5,
        "SELECT default_price FROM pretixbase_item WHERE name = 'Adult' AND event_id = "
        "(SELECT id FROM pretixbase_event WHERE slug = 'coastal-cliff-walk')",
        "UPDATE pretixbase_item SET default_price = ? WHERE name = 'Adult' AND event_id = "
        "(SELECT id FROM pretixbase_event WHERE slug = 'coastal-cliff-walk')",
        "trip:coastal-cliff-walk",
    ),
]


@pytest.fixture(scope="module", params=CASES, ids=[case.app for case in CASES])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[Case, ServedApp]]:
    case = request.param
    assert driver(case.app).installed(), f"{case.app} is not installed here: run `make apps`"
    with serve_app(case.app, DAY, seed=0) as app:
        yield case, app


def test_recorded_through_the_front_and_replayed_offline(
    served: tuple[Case, ServedApp], tmp_path: Path
) -> None:
    case, app = served
    out = tmp_path / f"{case.task}.wacz"
    front = app.front
    record_through_front(front, REPO_ROOT / "tasks" / "apps" / case.app / f"{case.task}.yaml", out)
    assert len(replay_offline(front, out)) >= case.pages


def test_a_database_edited_by_hand_is_caught_by_the_digest(served: tuple[Case, ServedApp]) -> None:
    case, app = served
    database = app.run_dir / "db.sqlite3"
    with sqlite3.connect(database) as connection:
        (original,) = connection.execute(case.price).fetchone()
        connection.execute(case.edit, (1.00,))
    try:
        with pytest.raises(AppError, match=rf"{case.app}: its content differs .*{case.item}"):
            app.verify()
    finally:
        with sqlite3.connect(database) as connection:
            connection.execute(case.edit, (original,))
    assert app.verify().sha256 == app.content.digest(app.driver.content_kinds).sha256


def test_an_app_killed_mid_recording_leaves_no_snapshot(tmp_path: Path) -> None:
    out = tmp_path / "killed.wacz"
    command = [
        sys.executable,
        "-m",
        "susbench",
        "apps",
        "record",
        "oscar",
        "--date",
        "2026-12-07",
        "--tasks",
        "oscar-skillet-order",
        "--out",
        str(out),
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    seen = []
    for line in process.stdout:
        seen.append(line)
        if "recording" in line:
            break
    children = subprocess.run(
        ["pgrep", "-P", str(process.pid)], capture_output=True, text=True
    ).stdout.split()
    assert children, f"no app server under the recording: {seen}"
    time.sleep(1.0)
    for pid in children:  # the server, and any command of the app's running beside it
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGKILL)
    rest = process.stdout.read()
    assert process.wait(timeout=300) != 0, [*seen, rest]
    assert not out.exists()
    assert [path.name for path in tmp_path.iterdir()] == [], "a partial snapshot was left behind"


def test_a_busy_port_names_the_app_and_the_fix() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_cli("apps", "serve", "oscar", "--port", str(port))
    assert result.returncode == 2
    assert (
        f"oscar: cannot listen on 127.0.0.1:{port}" in result.stderr
        and "choose another port with --port" in result.stderr
    )


def test_an_app_not_installed_says_what_to_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUSBENCH_HOME", str(tmp_path))
    result = run_cli("apps", "serve", "oscar", "--port", "0")
    assert result.returncode == 2
    assert "oscar: not installed here; run `make apps` (or `susbench apps install oscar`)" in result.stderr
