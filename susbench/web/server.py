"""`LocalWeb`: the threaded loopback server that serves every site over HTTP and HTTPS on one port.

The first byte of each connection decides the protocol (0x16 = TLS ClientHello). Responses are
gzip-compressed when asked, carry a Content-Length, keep connections alive, and use a `Date`
header derived from the configured date, never the wall clock.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import socket
import ssl
import threading
from datetime import UTC, datetime
from datetime import date as Date
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from susbench.core.errors import SusbenchError
from susbench.core.models import HostMap, ResolveRule
from susbench.web.app import Request, Response, WebApp
from susbench.web.catalog import SITES
from susbench.web.edition import DEFAULT_DATE
from susbench.web.tls import TlsFiles, ensure_tls

COMPRESSIBLE = ("text/", "application/json", "image/svg+xml")
IDLE_TIMEOUT = 30.0
MAX_BODY = 1 << 20


def accepts_gzip(header: str) -> bool:
    """True if Accept-Encoding allows gzip (q=0 refuses it)."""
    for item in header.split(","):
        name, _, params = item.strip().partition(";")
        if name.strip().lower() in ("gzip", "*"):
            q = params.strip().removeprefix("q=").strip()
            try:
                return not params or float(q) > 0
            except ValueError:
                return True
    return False


class _Handler(BaseHTTPRequestHandler):
    """HTTP/1.1 with keep-alive; the request goes to the WebApp, the response gets encoded here."""

    protocol_version = "HTTP/1.1"
    server_version = "LocalWeb/1.0"
    sys_version = ""
    timeout = IDLE_TIMEOUT
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: Chromium and mitmproxy make hundreds of requests per test."""

    def date_time_string(self, timestamp: float | None = None) -> str:
        return self.server.http_date

    def do_GET(self) -> None:
        self._serve()

    def do_HEAD(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.send_error(413)
            return
        body = self.rfile.read(length) if length else b""
        host = (self.headers.get("Host") or "").strip().lower()
        host = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        target = self.path
        if target.startswith(("http://", "https://")):
            target = "/" + target.split("/", 3)[3] if target.count("/") >= 3 else "/"
        headers = {key.lower(): value for key, value in self.headers.items()}
        request = Request(self.command, host, target, headers, body)
        response = self.server.app.handle(request)
        self._send(response, headers)

    def _send(self, response: Response, headers: dict[str, str]) -> None:
        body = response.body
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        if response.cacheable:
            etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
            self.send_header("Cache-Control", "public, max-age=3600")
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", self.server.http_date)
        else:
            self.send_header("Cache-Control", "no-store")
        if response.content_type.startswith(COMPRESSIBLE) and body:
            self.send_header("Vary", "Accept-Encoding")
            if accepts_gzip(headers.get("accept-encoding", "")):
                body = self.server.gzip(body)
                self.send_header("Content-Encoding", "gzip")
        for name, value in response.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class SniffingServer(ThreadingHTTPServer):
    """Counts connections and sniffs TLS on each one before the HTTP handler sees it (the app
    front of `susbench.apps` serves the same way)."""

    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], tls: ssl.SSLContext, day: Date
    ) -> None:
        super().__init__(address, handler)
        self.tls = tls
        self.http_date = format_datetime(datetime(day.year, day.month, day.day, 12, tzinfo=UTC), usegmt=True)
        self.connections = 0
        self._count_lock = threading.Lock()
        self._active: set[socket.socket] = set()

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = super().get_request()
        with self._count_lock:
            self.connections += 1
        return sock, address

    def finish_request(self, request: Any, client_address: Any) -> None:
        with self._count_lock:
            self._active.add(request)
        try:
            self._finish(request, client_address)
        finally:
            with self._count_lock:
                self._active.discard(request)

    def close_connections(self) -> None:
        """Hang up kept-alive connections so nothing is answered after `stop()`."""
        with self._count_lock:
            active = list(self._active)
        for sock in active:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def _finish(self, request: Any, client_address: Any) -> None:
        request.settimeout(IDLE_TIMEOUT)
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            first = request.recv(1, socket.MSG_PEEK)
        except OSError:
            return
        if not first:
            return
        if first != b"\x16":
            self.RequestHandlerClass(request, client_address, self)
            return
        try:
            wrapped = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            self.RequestHandlerClass(wrapped, client_address, self)
        finally:
            wrapped.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up mid-response are normal for a browser; don't print tracebacks."""


class _Server(SniffingServer):
    """The local web's server: every request goes to one `WebApp`; gzip is cached by content."""

    def __init__(self, address: tuple[str, int], app: WebApp, tls: ssl.SSLContext, day: Date) -> None:
        super().__init__(address, _Handler, tls, day)
        self.app = app
        self._gzip_cache: dict[bytes, bytes] = {}

    def gzip(self, body: bytes) -> bytes:
        """Deterministic gzip (mtime 0); cached by content digest since assets repeat."""
        key = hashlib.sha256(body).digest()
        cached = self._gzip_cache.get(key)
        if cached is None:
            cached = gzip.compress(body, compresslevel=6, mtime=0)
            if len(self._gzip_cache) < 4096:
                self._gzip_cache[key] = cached
        return cached


def _as_date(value: str | Date | None) -> Date:
    if value is None:
        return DEFAULT_DATE
    if isinstance(value, Date):
        return value
    return Date.fromisoformat(value)


class LoopbackSites:
    """Sites served on one loopback port by a `SniffingServer` in a background thread (a context
    manager and a browser `Route`): the local web, and each app's front (`susbench.apps`). Chromium
    reaches every host directly by host-resolver rules, trusting only the shared leaf key."""

    proxy_url: str | None = None

    def __init__(
        self, server: SniffingServer, tls: TlsFiles, hosts: tuple[str, ...], host: str, name: str
    ) -> None:
        self._server = server
        self._tls_files = tls
        self.hosts = hosts
        self.host = host
        self._name = name
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def connections(self) -> int:
        """TCP connections accepted so far (a replay test asserts none reach the origin)."""
        return self._server.connections

    @property
    def ca_cert_path(self) -> Path:
        return self._tls_files.ca_cert

    @property
    def spki(self) -> str:
        return self._tls_files.spki

    @property
    def loopback(self) -> str:
        """The address clients should dial (the wildcard bind address is not dialable)."""
        return "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host

    @property
    def resolve(self) -> HostMap:
        """Every host -> this server, for both schemes (port-less rules)."""
        rules = tuple(ResolveRule(host=host, ip=self.loopback, target_port=self.port) for host in self.hosts)
        return HostMap(rules=rules)

    def url(self, host: str, path: str = "/", scheme: str = "https") -> str:
        """Canonical URL of a page (reach it through `resolve` or `host_resolver_rules`)."""
        return f"{scheme}://{host}{path if path.startswith('/') else '/' + path}"

    def start(self) -> Self:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"{self._name}-{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()
        self._server.close_connections()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class LocalWeb(LoopbackSites):
    """The local web's eight sites on one loopback port, started in a background thread."""

    def __init__(
        self,
        port: int = 0,
        date: str | Date | None = None,
        seed: int = 0,
        host: str = "127.0.0.1",
        ca_dir: Path | None = None,
    ) -> None:
        self.date = _as_date(date)
        self.seed = seed
        hosts = tuple(site.host for site in SITES)
        tls = ensure_tls(hosts, ca_dir)
        try:
            server = _Server((host, port), WebApp(self.date, seed), tls.context, self.date)
        except OSError as exc:  # the port is taken, or the address is not this machine's
            raise SusbenchError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
        super().__init__(server, tls, hosts, host, "localweb")

    @property
    def host_resolver_rules(self) -> str:
        return f"MAP *.test {self.loopback}:{self.port}"
