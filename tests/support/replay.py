"""Snapshots written from hand-made exchanges, the recorded local web's shape and how a page settles
before it is recorded (its fixture: tests/replayer/conftest.py); index entries for the matcher's tests."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from susbench.replayer.matching import ReplayIndex
from susbench.snapshot import import_warc


@dataclass(frozen=True)
class SyntheticExchange:
    """One request/response pair written by hand into a test snapshot."""

    url: str
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    method: str = "GET"
    request_body: bytes = b""
    headers: tuple[tuple[str, str], ...] = field(default=())


def write_snapshot(out: Path, exchanges: Sequence[SyntheticExchange]) -> Path:
    """A WACZ holding `exchanges` in order (WARC written by warcio, imported by the snapshot code)."""
    warc = out.with_suffix(".warc.gz")
    with open(warc, "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        for exchange in exchanges:
            parts = urlsplit(exchange.url)
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            request_headers = StatusAndHeaders(
                f"{exchange.method} {target} HTTP/1.1",
                [("Host", parts.netloc)],
                is_http_request=True,
            )
            request = writer.create_warc_record(
                exchange.url,
                "request",
                payload=BytesIO(exchange.request_body),
                http_headers=request_headers,
                warc_headers_dict={
                    "WARC-Payload-Digest": "sha256:" + hashlib.sha256(exchange.request_body).hexdigest()
                },
            )
            response_headers = StatusAndHeaders(
                f"{exchange.status} OK",
                [
                    ("Content-Type", exchange.content_type),
                    *exchange.headers,
                    ("Content-Length", str(len(exchange.body))),
                ],
                protocol="HTTP/1.1",
            )
            response = writer.create_warc_record(
                exchange.url, "response", payload=BytesIO(exchange.body), http_headers=response_headers
            )
            request.rec_headers.add_header(
                "WARC-Concurrent-To", response.rec_headers.get_header("WARC-Record-ID")
            )
            writer.write_record(response)
            writer.write_record(request)
    return import_warc([warc], out)


RECORD_DAY_NOON_MS = 1_795_971_600_000
"""2026-11-29 12:00 in America/New_York: the replayed clock of the recorded local web."""
SETTLE_MS = 1200


@dataclass(frozen=True)
class RecordedWeb:
    """The local web recorded once per session: the WACZ and the pages visited, in order."""

    path: Path
    pages: tuple[str, ...]
    post_site: str


def settle(page: Page) -> None:
    """Scroll to the bottom so lazily loaded parts are captured, then wait for the network."""
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    with suppress(PlaywrightError):
        page.wait_for_load_state("networkidle", timeout=SETTLE_MS)


@dataclass(frozen=True)
class IndexedEntry:
    url: str
    seq: int
    method: str = "GET"
    req_digest: str | None = None
    session: str | None = None


def index_of(*entries: IndexedEntry, loader=None) -> ReplayIndex[IndexedEntry]:
    return ReplayIndex(list(entries), body_loader=loader)
