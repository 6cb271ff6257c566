"""WARC/1.1 writing on a thread of its own: digests, revisit dedup, masking and gzip off the event loop.

The proxy copies what it needs out of each flow into a `RecordedExchange` (cheap: references to
bytes already in memory) and queues it; records are written in the order they were queued.
"""

from __future__ import annotations

import base64
import hashlib
import queue
import threading
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from susbench.recorder.redaction import Redactor
from susbench.snapshot.cdxj import SESSION_HEADER

HOP_BY_HOP = {"transfer-encoding", "connection", "keep-alive", "proxy-connection", "upgrade"}
REVISIT_MIN_BYTES = 1


@dataclass(frozen=True)
class RecordedExchange:
    """Everything the writer thread needs from a flow, detached from mitmproxy's objects."""

    url: str
    method: str
    path: str
    authority: str
    request_headers: tuple[tuple[bytes, bytes], ...]
    request_body: bytes
    status: int
    reason: str
    response_headers: tuple[tuple[bytes, bytes], ...]
    response_body: bytes
    started: float
    protocols: tuple[str, ...]
    server_ip: str
    session: str = ""


def _warc_date(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def _headers(fields: tuple[tuple[bytes, bytes], ...], body_length: int) -> list[tuple[str, str]]:
    """Header list as recorded, minus hop-by-hop framing; Content-Length fixed if it was chunked."""
    out = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in fields]
    chunked = any(k.lower() == "transfer-encoding" for k, _ in out)
    kept = [(k, v) for k, v in out if k.lower() not in HOP_BY_HOP]
    if chunked or not any(k.lower() == "content-length" for k, _ in kept):
        kept = [(k, v) for k, v in kept if k.lower() != "content-length"]
        kept.append(("Content-Length", str(body_length)))
    return kept


class WarcWriterThread:
    """Owns the WARC file; records are written in the order exchanges were queued.

    With a `redactor`, secrets are masked before anything reaches the file (see `redaction`).
    """

    def __init__(
        self, path: Path, warcinfo: dict[str, str], dedup: bool = True, redactor: Redactor | None = None
    ) -> None:
        self.path = path
        self.dedup = dedup
        self.redactor = redactor
        if redactor is not None:
            warcinfo = {key: " ".join(map(redactor.url, value.split(" "))) for key, value in warcinfo.items()}
        self._queue: queue.Queue[RecordedExchange | None] = queue.Queue()
        self._handle = open(path, "wb")  # noqa: SIM115 - closed by close()
        self._writer = WARCWriter(self._handle, gzip=True, warc_version="1.1")
        self._seen: dict[str, tuple[str, str]] = {}
        self.records = 0
        self.revisits = 0
        self._writer.write_record(self._writer.create_warcinfo_record(path.name, warcinfo))
        self._thread = threading.Thread(target=self._run, name="warc-writer", daemon=True)
        self._thread.start()

    def put(self, exchange: RecordedExchange) -> None:
        self._queue.put(exchange)

    def flush(self) -> None:
        """Block until everything queued so far is on disk."""
        self._queue.join()
        self._handle.flush()

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()
        self._handle.close()

    def _run(self) -> None:
        while True:
            exchange = self._queue.get()
            try:
                if exchange is None:
                    return
                self._write(exchange)
            finally:
                self._queue.task_done()

    def _masked(self, exchange: RecordedExchange) -> RecordedExchange:
        if self.redactor is None:
            return exchange
        return replace(
            exchange,
            url=self.redactor.url(exchange.url),
            path=self.redactor.url(exchange.path),
            request_headers=self.redactor.headers(exchange.request_headers),
            response_headers=self.redactor.headers(exchange.response_headers),
        )

    def _write(self, exchange: RecordedExchange) -> None:
        exchange = self._masked(exchange)
        writer = self._writer
        date = _warc_date(exchange.started)
        body = exchange.response_body
        digest = _sha1_b32(body)
        protocol_headers = [("WARC-Protocol", p) for p in exchange.protocols]
        common = {"WARC-Date": date}
        if exchange.server_ip:
            common["WARC-IP-Address"] = exchange.server_ip
        if exchange.session:
            common[SESSION_HEADER] = exchange.session
        status_line = f"{exchange.status} {exchange.reason}".strip()
        response_headers = StatusAndHeaders(
            status_line, _headers(exchange.response_headers, len(body)), protocol="HTTP/1.1"
        )
        original = self._seen.get(digest) if self.dedup and len(body) >= REVISIT_MIN_BYTES else None
        if original is not None:
            response = writer.create_revisit_record(
                exchange.url,
                digest,
                original[0],
                original[1],
                http_headers=response_headers,
                warc_headers_dict=dict(common),
            )
            self.revisits += 1
        else:
            response = writer.create_warc_record(
                exchange.url,
                "response",
                payload=BytesIO(body),
                length=len(body),
                http_headers=response_headers,
                warc_headers_dict=dict(common),
            )
            if self.dedup:
                self._seen.setdefault(digest, (exchange.url, date))
        for name, value in protocol_headers:
            response.rec_headers.add_header(name, value)
        request_headers = _headers(exchange.request_headers, len(exchange.request_body))
        if not exchange.request_body and exchange.method in ("GET", "HEAD"):
            request_headers = [(k, v) for k, v in request_headers if k.lower() != "content-length"]
        if not any(k.lower() == "host" for k, _ in request_headers):
            request_headers.insert(0, ("Host", exchange.authority))
        request = writer.create_warc_record(
            exchange.url,
            "request",
            payload=BytesIO(exchange.request_body),
            length=len(exchange.request_body),
            http_headers=StatusAndHeaders(
                f"{exchange.method} {exchange.path} HTTP/1.1", request_headers, is_http_request=True
            ),
            warc_headers_dict={
                **common,
                "WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID"),
            },
        )
        for name, value in protocol_headers:
            request.rec_headers.add_header(name, value)
        writer.write_record(response)
        writer.write_record(request)
        self.records += 2
