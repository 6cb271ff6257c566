"""WARCs recorded by other tools (node-warc, js-wacz, puppeteer-warc) replay with honest coverage."""

from __future__ import annotations

from pathlib import Path

import pytest

from replayer.check import check_snapshot

REAL_WARCS = Path("/work/shared/realdata/warc")


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["books.toscrape.warc", "lil-projects.warc.gz", "wwwgooglecom.warc.gz"])
def test_real_warc_replays_with_a_coverage_report(name: str) -> None:
    path = REAL_WARCS / name
    if not path.is_file():
        pytest.skip(f"{path} is not on this machine")
    pages = check_snapshot(path, timeout_s=20)
    assert pages, "no page found in the WARC"
    for page in pages:
        assert page.error is None, page
        coverage = page.coverage
        assert coverage.exact + coverage.canonical + coverage.fuzzy >= 1
        assert coverage.requests == coverage.exact + coverage.canonical + coverage.fuzzy + coverage.miss
        assert len(coverage.misses) <= coverage.miss
