"""The recorder on real traffic: each real archive of ../shared/realdata/warc/ is served as the live
site (tests/support/origin_server.py: real headers and bodies, gzip and brotli on the wire, every
host over HTTP or HTTPS with a throwaway CA), recorded with `susbench record`, and the new
recording's replay is held against the original archive's replay and against the live site itself
(tests/support/real_traffic.py).

What fails when the recorder breaks: a dropped or truncated body, or a body stored decoded under its
Content-Encoding (or encoded without it), fails the byte comparison; a page that no longer replays
whole fails the coverage and the screenshots. benchmarks/real_traffic_roundtrip.py prints the same
figures as a table (benchmarks/results/real-traffic-2026-12-03.md).
"""

from __future__ import annotations

import zlib
from pathlib import Path

import brotli
import pytest
from playwright.sync_api import Playwright

from susbench.snapshot import Snapshot, verify_snapshot
from tests.support.origin_server import read_exchanges
from tests.support.real_traffic import MATCH_BELOW, round_trip

LEAST_COMPARED = 8
"""Distinct archived URLs each page drew from the origin while recording, all compared byte for byte
(measured: 30 books.toscrape, 16 lil, 12 google; the archives' other URLs are srcset variants and
requests this Chromium does not make)."""
COVERAGE_TOLERANCE = 0.05
"""The new recording's replay may serve this much less of a page's requests to the archive's hosts
than the original's replay does (measured: it serves as much or more on all three)."""


def _strictly_decoded(url: str, body: bytes, encoding: str | None) -> bytes:
    """The body under its Content-Encoding; fails the test if it is not really encoded that way."""
    try:
        if encoding in (None, "identity"):
            return body
        if encoding == "gzip":
            return zlib.decompress(body, 16 + zlib.MAX_WBITS)
        if encoding == "br":
            return brotli.decompress(body)
    except (zlib.error, brotli.error) as exc:
        raise AssertionError(f"{url}: recorded body is not {encoding}: {exc}") from None
    raise AssertionError(f"{url}: unexpected Content-Encoding {encoding!r}")


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["books.toscrape.warc", "lil-projects.warc.gz", "wwwgooglecom.warc.gz"])
def test_a_real_archive_served_live_is_recorded_and_replays_like_the_original(
    name: str, realdata: Path, web_playwright: Playwright, tmp_path: Path
) -> None:
    warc = realdata / "warc" / name
    assert warc.is_file(), f"{warc} is missing from the shared real data (../shared/realdata/README.md)"
    trip = round_trip(warc, tmp_path, web_playwright)
    assert trip.pages, "no page of the archive to record"
    assert verify_snapshot(trip.recording).ok

    # Every response the origin sent from the archive is recorded with its encoding and its bytes.
    archived = {}
    for exchange in read_exchanges(warc):
        archived.setdefault(exchange.url, exchange)
    sent = {entry.url: entry for entry in trip.origin_log if entry.match == "exact" and entry.status == 200}
    with Snapshot.open(trip.recording) as snapshot:
        assert {page.url for page in trip.pages} <= {page.url for page in snapshot.manifest.pages}
        recorded = {entry.url: snapshot.read_response(entry) for entry in snapshot.entries()}
    compared = encoded = 0
    for url, entry in sent.items():
        response = recorded.get(url)
        assert response is not None, f"{url} was served by the origin but not recorded"
        assert response.header("Content-Encoding") == entry.encoding, url
        assert _strictly_decoded(url, response.body, entry.encoding) == archived[url].body, url
        compared += 1
        encoded += entry.encoding is not None
    assert compared >= LEAST_COMPARED, compared
    assert encoded, "the origin sent nothing compressed: the test would not see an encoding kept wrong"

    for page in trip.pages:
        assert page.original.error is None and page.recorded.error is None, page
        assert (
            page.recorded.archived.matched_ratio >= page.original.archived.matched_ratio - COVERAGE_TOLERANCE
        )
        # The new recording replays what the live site showed...
        assert page.live_vs_recorded < MATCH_BELOW, page
        # ...and is no further from the original's replay than the live site itself is.
        assert page.pixel_difference < page.live_vs_original + MATCH_BELOW, page
