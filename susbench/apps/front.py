"""`AppFront`: one loopback port, HTTP and HTTPS, in front of a running app, under its hostnames.

It is what `LocalWeb` is for the synthetic sites: TLS from the local web's CA (a leaf naming the
app's hosts, the shared leaf key Chromium pins), `Date` headers from the site's date, a connection
count, and a browser `Route`. Requests go to the app's own server on another loopback port with
their Host header and `X-Forwarded-Proto`, so the app builds its links for https://<host>/.
"""

from __future__ import annotations

import http.client
import ssl
from datetime import date as Date
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from susbench.web.server import MAX_BODY, LoopbackSites, SniffingServer
from susbench.web.tls import ensure_tls

HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "date"}
)
BACKEND_TIMEOUT = 60.0


class _FrontHandler(BaseHTTPRequestHandler):
    """Forwards each request to the app; answers 421 for a host the app is not served under."""

    protocol_version = "HTTP/1.1"
    server_version = "AppFront/1.0"
    sys_version = ""
    server: _FrontServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a page makes dozens of requests."""

    def date_time_string(self, timestamp: float | None = None) -> str:
        return self.server.http_date

    def do_GET(self) -> None:
        self._forward()

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.send_error(413)
            return
        body = self.rfile.read(length) if length else b""
        host = (self.headers.get("Host") or "").strip().lower().rsplit(":", 1)[0]
        if host not in self.server.hosts:
            self.send_error(421, f"not served here: {host or '(no Host)'}")
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        headers["Host"] = host
        headers["X-Forwarded-Proto"] = "https" if isinstance(self.connection, ssl.SSLSocket) else "http"
        headers["X-Forwarded-For"] = self.client_address[0]
        connection = http.client.HTTPConnection(
            "127.0.0.1", self.server.backend_port, timeout=BACKEND_TIMEOUT
        )
        try:
            connection.request(self.command, self.path, body=body or None, headers=headers)
            answer = connection.getresponse()
            payload = answer.read()
        except OSError as exc:
            self.send_error(502, f"the app did not answer: {exc}")
            return
        finally:
            connection.close()
        self.send_response(answer.status, answer.reason)
        for name, value in answer.getheaders():
            if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)


class _FrontServer(SniffingServer):
    def __init__(
        self, address: tuple[str, int], tls: ssl.SSLContext, day: Date, hosts: tuple[str, ...], backend: int
    ) -> None:
        super().__init__(address, _FrontHandler, tls, day)
        self.hosts = frozenset(hosts)
        self.backend_port = backend


class AppFront(LoopbackSites):
    """A running app's front on one loopback port (a context manager and a browser `Route`)."""

    def __init__(
        self,
        name: str,
        hosts: tuple[str, ...],
        backend_port: int,
        day: Date,
        port: int = 0,
        host: str = "127.0.0.1",
        ca_dir: Path | None = None,
    ) -> None:
        self.name = name
        self.date = day
        tls = ensure_tls(hosts, ca_dir, leaf=f"leaf-app-{name}.pem")
        server = _FrontServer((host, port), tls.context, day, hosts, backend_port)
        super().__init__(server, tls, hosts, host, f"appfront-{name}")

    @property
    def host_resolver_rules(self) -> str:
        return ", ".join(f"MAP {host} {self.loopback}:{self.port}" for host in self.hosts)
