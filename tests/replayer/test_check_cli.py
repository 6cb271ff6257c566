"""`susbench replay check` from the command line: a line per page loaded on stderr while it works,
and with `--json` one document on stdout."""

from __future__ import annotations

import json

import pytest

from susbench.catalog.tasksets import task_set, task_set_snapshot
from tests.support.cli import run_cli


@pytest.mark.e2e
def test_replay_check_shows_each_page_on_stderr_and_keeps_stdout_one_document() -> None:
    # Ghost's snapshot: its 14 pages (the local web's holds 290 sessions, minutes of page loads).
    snapshot = task_set_snapshot(task_set("ghost"))
    result = run_cli("replay", "check", str(snapshot), "--json", "--mode", "direct", timeout=600)
    assert result.returncode == 0, result.stderr
    pages = json.loads(result.stdout)
    assert pages
    shown = result.stderr.splitlines()
    assert shown == [f"{number}/{len(pages)} {page['url']}" for number, page in enumerate(pages, start=1)]
