"""Recording a task flow through a running app's front, and replaying it with the app still up."""

from __future__ import annotations

from pathlib import Path

from susbench.apps import AppFront
from susbench.replayer.check import PageCoverage, check_snapshot
from tests.support.cli import run_cli


def record_through_front(front: AppFront, task_file: Path, out: Path) -> None:
    """`susbench record` of one task, its hosts resolved to the front and its CA trusted."""
    recorded = run_cli(
        "record",
        str(task_file),
        "--out",
        str(out),
        *[word for rule in front.resolve.as_args() for word in ("--resolve", rule)],
        "--upstream-ca",
        str(front.ca_cert_path),
        timeout=600,
    )
    assert recorded.returncode == 0, recorded.stderr


def replay_offline(front: AppFront, snapshot: Path) -> list[PageCoverage]:
    """Every page of `snapshot` replayed in Chromium while the app still runs: none of it may reach the
    app's front, no page may fail, and at least 99% of the page requests must be answered."""
    before = front.connections
    pages = check_snapshot(snapshot, mode="direct")
    assert front.connections == before, "the replay reached the live app"
    assert [page.url for page in pages if page.error] == []
    requests = sum(page.site.requests for page in pages)
    answered = sum(page.site.requests * page.site.matched_ratio for page in pages)
    assert answered >= 0.99 * requests, [page.site.misses for page in pages if page.site.misses]
    return pages
