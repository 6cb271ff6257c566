"""mitmproxy addons: WARC/1.1 writing off the event loop, and curl-style host mapping.

The WARC addon copies what it needs out of each flow on the event loop (cheap: references to
bytes already in memory) and hands it to a writer thread, which digests, dedups and compresses.
"""

from __future__ import annotations

import base64
import hashlib
import queue
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path

from mitmproxy import http
from mitmproxy.proxy.server_hooks import ServerConnectionHookData
from pydantic import Field
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from susbench.models import Frozen, HostMap

HOP_BY_HOP = {"transfer-encoding", "connection", "keep-alive", "proxy-connection", "upgrade"}
REVISIT_MIN_BYTES = 1


class RequestLogEntry(Frozen):
    """One exchange the proxy saw (a failed one has status 0)."""

    url: str
    method: str
    status: int
    bytes: int = Field(ge=0)
    error: str = ""


@dataclass(frozen=True)
class Exchange:
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
    """Owns the WARC file; records are written in the order exchanges were queued."""

    def __init__(self, path: Path, warcinfo: dict[str, str], dedup: bool = True) -> None:
        self.path = path
        self.dedup = dedup
        self._queue: queue.Queue[Exchange | None] = queue.Queue()
        self._handle = open(path, "wb")  # noqa: SIM115 - closed by close()
        self._writer = WARCWriter(self._handle, gzip=True, warc_version="1.1")
        self._seen: dict[str, tuple[str, str]] = {}
        self.records = 0
        self.revisits = 0
        self._writer.write_record(self._writer.create_warcinfo_record(path.name, warcinfo))
        self._thread = threading.Thread(target=self._run, name="warc-writer", daemon=True)
        self._thread.start()

    def put(self, exchange: Exchange) -> None:
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

    def _write(self, exchange: Exchange) -> None:
        writer = self._writer
        date = _warc_date(exchange.started)
        body = exchange.response_body
        digest = _sha1_b32(body)
        protocol_headers = [("WARC-Protocol", p) for p in exchange.protocols]
        common = {"WARC-Date": date}
        if exchange.server_ip:
            common["WARC-IP-Address"] = exchange.server_ip
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


def _protocols(flow: http.HTTPFlow) -> tuple[str, ...]:
    server = flow.server_conn
    application = "h2" if flow.response and flow.response.http_version == "HTTP/2.0" else "http/1.1"
    tls = (server.tls_version or "").lower().replace("tlsv", "tls/")
    return (application, tls) if server.tls_established and tls else (application,)


class WarcAddon:
    """Queue every completed exchange for WARC writing; keep a per-request log."""

    def __init__(self, writer: WarcWriterThread | None) -> None:
        self.writer = writer
        self.log: list[RequestLogEntry] = []

    def response(self, flow: http.HTTPFlow) -> None:
        request, response = flow.request, flow.response
        if response is None:
            return
        body = response.raw_content or b""
        self.log.append(
            RequestLogEntry(
                url=request.url, method=request.method, status=response.status_code, bytes=len(body)
            )
        )
        if self.writer is None:
            return
        peer = flow.server_conn.peername
        self.writer.put(
            Exchange(
                url=request.url,
                method=request.method,
                path=request.path,
                authority=request.pretty_host
                if request.port in (80, 443)
                else f"{request.host}:{request.port}",
                request_headers=tuple(request.headers.fields),
                request_body=request.raw_content or b"",
                status=response.status_code,
                reason=response.reason or "",
                response_headers=tuple(response.headers.fields),
                response_body=body,
                started=request.timestamp_start,
                protocols=_protocols(flow),
                server_ip=str(peer[0]) if peer else "",
            )
        )

    def error(self, flow: http.HTTPFlow) -> None:
        if flow.response is None and flow.error is not None:
            self.log.append(
                RequestLogEntry(
                    url=flow.request.url, method=flow.request.method, status=0, bytes=0, error=flow.error.msg
                )
            )


class HostMapAddon:
    """Connect to the mapped IP:PORT while Host and SNI stay the original hostname.

    The address is swapped only for the TCP connect and put back once connected, so mitmproxy
    still files the connection (and the requests on it) under `host:port` and reuses it.
    mitmproxy forbids assigning `address` on an open connection, hence `object.__setattr__`.
    """

    def __init__(self, host_map: HostMap) -> None:
        self.host_map = host_map
        self._original: dict[str, tuple[str, int]] = {}

    def server_connect(self, data: ServerConnectionHookData) -> None:
        server = data.server
        if server.address is None:
            return
        host, port = server.address[0], server.address[1]
        target = self.host_map.lookup(host, port)
        if target is None:
            return
        if server.sni is None:
            server.sni = host
        self._original[server.id] = (host, port)
        server.address = target

    def server_connected(self, data: ServerConnectionHookData) -> None:
        original = self._original.pop(data.server.id, None)
        if original is not None:
            object.__setattr__(data.server, "address", original)

    def server_connect_error(self, data: ServerConnectionHookData) -> None:
        self._original.pop(data.server.id, None)
