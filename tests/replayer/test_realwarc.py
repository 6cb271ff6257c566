"""WARCs recorded by other tools (node-warc, js-wacz, puppeteer-warc) replay with honest coverage."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Playwright

from susbench.replayer.check import check_snapshot
from susbench.snapshot import Snapshot, import_warc


def _without_scheme(url: str) -> str:
    return url.split("://", 1)[-1]


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("name", "least_served"),
    [("books.toscrape.warc", 29), ("lil-projects.warc.gz", 15), ("wwwgooglecom.warc.gz", 10)],
)
def test_real_warc_replays_with_a_coverage_report(
    name: str, least_served: int, realdata: Path, web_playwright: Playwright, tmp_path: Path
) -> None:
    path = realdata / "warc" / name
    with Snapshot.open(import_warc([path], tmp_path / "captured.wacz")) as snapshot:
        captured = {_without_scheme(entry.url) for entry in snapshot.entries()}
    pages = check_snapshot(path, timeout_s=20, playwright=web_playwright)
    assert pages, "no page found in the WARC"
    served = 0
    for page in pages:
        assert page.error is None, page
        coverage = page.coverage
        assert coverage.requests == coverage.exact + coverage.canonical + coverage.fuzzy + coverage.miss
        served += coverage.exact + coverage.canonical + coverage.fuzzy
        # What was never captured is reported as a miss, not hidden behind a fuzzy match.
        for missed in coverage.misses:
            assert _without_scheme(missed) not in captured, missed
    assert served >= least_served
