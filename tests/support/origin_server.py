"""A WARC made by another tool, served back as if it were the live site it was recorded from.

The recorder is only tested for real when what reaches it looks like the web: real headers, real
bodies, gzip or brotli on the wire, several hosts, HTTPS with a certificate it has to verify. The
archives in `../shared/realdata/warc/` hold exactly such traffic, so `OriginServer` answers each
recorded request with the recorded status, headers and body, on one loopback port that speaks HTTP
and HTTPS (TLS is sniffed), for every host the archive holds, with a leaf from a throwaway CA made
per run. `susbench record --resolve HOST:443=127.0.0.1:PORT --upstream-ca CA` then records it.

Bodies are normalised first, because tools store them differently: node-warc keeps
`Transfer-Encoding: chunked` over a body it already de-chunked, puppeteer-warc keeps
`Content-Encoding: br` over a body it already decoded. A chunked framing or an encoding is undone
only when it really is one; what remains is the body the site meant. On the wire it is encoded
again the way the site would: with its recorded Content-Encoding when the client accepts that one,
else gzip when the client accepts gzip and the type is compressible, else as it is.
"""

from __future__ import annotations

import base64
import datetime
import gzip
import hashlib
import http.server
import re
import socket
import ssl
import threading
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import brotli
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from pydantic import Field
from warcio.archiveiterator import ArchiveIterator

from susbench.core.models import Frozen

HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding", "te", "trailer"}
)
COMPRESSIBLE = ("text/", "javascript", "json", "xml", "css", "svg", "font", "woff", "ecmascript")
ENCODERS = {"gzip": lambda body: gzip.compress(body, mtime=0), "br": brotli.compress}
TLS_HANDSHAKE = 0x16
TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
WORDS = re.compile(r"[0-9A-Za-z-]+( [0-9A-Za-z-]+)+")


class OriginExchange(Frozen):
    """One recorded response, its body decoded to what the site meant (see the module's docstring)."""

    method: str = Field(description="the request's method, `*` where the request record has none")
    url: str
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    encoding: str | None = Field(description="the recorded Content-Encoding, lower-cased, if any")

    @property
    def content_type(self) -> str:
        return next((value for name, value in self.headers if name.lower() == "content-type"), "")


class OriginLogEntry(Frozen):
    """One request the origin answered: `exact` (method and URL recorded), `path` (the same path with
    other query values, as a live site answers any cache-buster), or `miss` (404)."""

    method: str
    url: str
    status: int
    match: Literal["exact", "path", "miss"]
    encoding: str | None


def _dechunk(raw: bytes) -> bytes | None:
    """The body of a chunked framing, or None when `raw` is not one (a tool already undid it)."""
    out, at = bytearray(), 0
    while True:
        end = raw.find(b"\r\n", at)
        if end < 0:
            return None
        size_text = raw[at:end].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            return None
        if size == 0:
            return bytes(out)
        start = end + 2
        if raw[start + size : start + size + 2] != b"\r\n":
            return None
        out += raw[start : start + size]
        at = start + size + 2


def _decode(body: bytes, encoding: str | None) -> bytes:
    """`body` without its Content-Encoding, or as it is when it is not really encoded that way."""
    decoders = {
        "gzip": lambda data: zlib.decompress(data, 16 + zlib.MAX_WBITS),
        "x-gzip": lambda data: zlib.decompress(data, 16 + zlib.MAX_WBITS),
        "deflate": zlib.decompress,
        "br": brotli.decompress,
    }
    decoder = decoders.get(encoding or "")
    if decoder is None or not body:
        return body
    try:
        return decoder(body)
    except (zlib.error, brotli.error):
        return body


def repair_headers(headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The header lines the site really sent, where the recording tool mangled them.

    node-warc writes some names with spaces for hyphens (`X-Content Type Options`); puppeteer-warc
    joins repeated headers with a newline (a second Set-Cookie becomes a line of its own, which a
    WARC reader splits at its first colon). A real server sends neither, and mitmproxy answers 502
    to an upstream header whose name is not a token, so both are put back as the site sent them.
    """
    repaired: list[tuple[str, str]] = []
    for name, value in headers:
        if TOKEN.fullmatch(name):
            repaired.append((name, value))
        elif repaired and "=" in name:
            line = f"{name}:{value}" if value else name
            repaired.append((repaired[-1][0], line.strip()))
        elif WORDS.fullmatch(name):
            repaired.append((name.replace(" ", "-"), value))
    return tuple(repaired)


def read_exchanges(warc: Path) -> list[OriginExchange]:
    """Every response record of the WARC with its request's method, in capture order (`*` when its
    request record has no request line, as puppeteer-warc writes a status line there).

    Records whose target has a fragment are left out: no HTTP request carries one (puppeteer-warc
    stores the rendered DOM as `https://www.google.com/#rendered-html`).
    """
    methods: dict[str, str] = {}
    responses: list[tuple[str, Any, bytes]] = []
    with warc.open("rb") as stream:
        for record in ArchiveIterator(stream):
            if record.rec_type == "request" and record.http_headers is not None:
                concurrent = record.rec_headers.get_header("WARC-Concurrent-To")
                method = record.http_headers.protocol
                if concurrent and method and method.isupper() and method.isalpha():
                    methods[concurrent] = method
            elif record.rec_type == "response" and record.http_headers is not None:
                url = record.rec_headers.get_header("WARC-Target-URI")
                if "#" in url:
                    continue
                responses.append(
                    (record.rec_headers.get_header("WARC-Record-ID"), record, record.raw_stream.read())
                )
    exchanges = []
    for record_id, record, raw in responses:
        http_headers = record.http_headers
        headers = repair_headers(http_headers.headers)
        if (http_headers.get_header("Transfer-Encoding") or "").lower() == "chunked":
            raw = _dechunk(raw) or raw
        encoding = (http_headers.get_header("Content-Encoding") or "").strip().lower() or None
        status_line = http_headers.statusline.split(" ", 1)
        exchanges.append(
            OriginExchange(
                method=methods.get(record_id, "*"),
                url=record.rec_headers.get_header("WARC-Target-URI"),
                status=int(status_line[0]),
                reason=status_line[1] if len(status_line) > 1 else "",
                headers=headers,
                body=_decode(raw, encoding),
                encoding=encoding,
            )
        )
    return exchanges


def archive_hosts(exchanges: Iterable[OriginExchange]) -> dict[str, set[int]]:
    """Each host of the archive with the ports its URLs reach (443 for https, 80 for http)."""
    hosts: dict[str, set[int]] = {}
    for exchange in exchanges:
        parts = urlsplit(exchange.url)
        default = 443 if parts.scheme == "https" else 80
        hosts.setdefault(parts.hostname or "", set()).add(parts.port or default)
    return hosts


class ThrowawayCA(Frozen):
    """A CA and one leaf for every host of a run, written to `folder` (PEM); nothing outlives it."""

    folder: Path
    ca_pem: Path
    leaf_pem: Path
    key_pem: Path
    spki: str = Field(description="base64 sha256 of the leaf's public key, the pin a Chromium trusts")

    @classmethod
    def create(cls, folder: Path, hosts: Iterable[str]) -> ThrowawayCA:
        folder.mkdir(parents=True, exist_ok=True)
        now = datetime.datetime.now(datetime.UTC)
        valid = (now - datetime.timedelta(days=1), now + datetime.timedelta(days=7))
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "susbench real-traffic test CA")])
        ca = (
            x509.CertificateBuilder()
            .subject_name(ca_name)
            .issuer_name(ca_name)
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(valid[0])
            .not_valid_after(valid[1])
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        leaf_key = ec.generate_private_key(ec.SECP256R1())
        names = sorted(set(hosts))
        leaf = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
            .issuer_name(ca_name)
            .public_key(leaf_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(valid[0])
            .not_valid_after(valid[1])
            .add_extension(
                x509.SubjectAlternativeName([x509.DNSName(name) for name in names]), critical=False
            )
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
            )
            .sign(ca_key, hashes.SHA256())
        )
        ca_pem, leaf_pem, key_pem = folder / "ca.pem", folder / "leaf.pem", folder / "leaf-key.pem"
        ca_pem.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
        leaf_pem.write_bytes(
            leaf.public_bytes(serialization.Encoding.PEM) + ca.public_bytes(serialization.Encoding.PEM)
        )
        key_pem.write_bytes(
            leaf_key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        key_pem.chmod(0o600)
        public = leaf_key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        spki = base64.b64encode(hashlib.sha256(public).digest()).decode("ascii")
        return cls(folder=folder, ca_pem=ca_pem, leaf_pem=leaf_pem, key_pem=key_pem, spki=spki)


def _accepts(header: str, coding: str) -> bool:
    """Whether an Accept-Encoding value admits `coding` (q=0 refuses it)."""
    for item in header.split(","):
        name, _, params = item.strip().partition(";")
        if name.strip().lower() in (coding, "*"):
            return params.replace(" ", "").lower() not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the origin's log is `OriginServer.log`."""

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        scheme = "https" if isinstance(self.connection, ssl.SSLSocket) else "http"
        host = (self.headers.get("Host") or "").lower()
        default = ":443" if scheme == "https" else ":80"
        host = host.removesuffix(default)
        url = f"{scheme}://{host}{self.path}"
        exchange, match = self.server.origin.pick(self.command, url)
        if exchange is None:
            body = b"not in the archive\n"
            self.send_response(404)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.server.origin.note(
                OriginLogEntry(method=self.command, url=url, status=404, match="miss", encoding=None)
            )
            return
        body, encoding = exchange.body, None
        accepted = self.headers.get("Accept-Encoding") or ""
        no_body = self.command == "HEAD" or exchange.status in (204, 304) or not body
        if not no_body:
            if exchange.encoding in ENCODERS and _accepts(accepted, exchange.encoding):
                encoding = exchange.encoding
            elif _accepts(accepted, "gzip") and (
                exchange.encoding or any(kind in exchange.content_type.lower() for kind in COMPRESSIBLE)
            ):
                encoding = "gzip"
            if encoding is not None:
                body = ENCODERS[encoding](body)
        self.send_response_only(exchange.status, exchange.reason or None)
        for name, value in exchange.headers:
            if name.lower() not in HOP_BY_HOP:
                self.send_header(name, value)
        if encoding is not None:
            self.send_header("Content-Encoding", encoding)
        if exchange.status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and exchange.status not in (204, 304):
            self.wfile.write(body)
        self.server.origin.note(
            OriginLogEntry(
                method=self.command, url=url, status=exchange.status, match=match, encoding=encoding
            )
        )

    do_GET = do_POST = do_HEAD = do_PUT = do_OPTIONS = _answer


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    origin: OriginServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: a browser that drops a connection mid-body (a page navigating on) is no fault."""

    def finish_request(self, request: Any, client_address: Any) -> None:
        """On the connection's own thread: TLS when the first byte opens a handshake, else HTTP."""
        try:
            first = request.recv(1, socket.MSG_PEEK)
            if first and first[0] == TLS_HANDSHAKE:
                request = self.origin.tls.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            return
        super().finish_request(request, client_address)


class OriginServer:
    """The archive as a live site on 127.0.0.1 (one port, HTTP and HTTPS); see the module docstring.

    Repeated requests for one URL get its recorded responses in order, then the last again.
    """

    def __init__(self, warc: Path, folder: Path) -> None:
        self.exchanges = read_exchanges(warc)
        self.hosts = archive_hosts(self.exchanges)
        self.ca = ThrowawayCA.create(folder, self.hosts)
        self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.tls.load_cert_chain(self.ca.leaf_pem, self.ca.key_pem)
        self.tls.set_alpn_protocols(["http/1.1"])
        self.log: list[OriginLogEntry] = []
        self._by_url: dict[tuple[str, str], list[OriginExchange]] = {}
        self._by_path: dict[tuple[str, str], OriginExchange] = {}
        for exchange in self.exchanges:
            self._by_url.setdefault((exchange.method, exchange.url), []).append(exchange)
            self._by_path.setdefault((exchange.method, exchange.url.split("?", 1)[0]), exchange)
        self._served: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.origin = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="origin-server", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def proxy_url(self) -> None:
        """No proxy: with `host_resolver_rules` and `spki` this is a `susbench.browser` Route, so a
        Chromium can load the "live site" itself, without the recorder in between."""
        return None

    @property
    def host_resolver_rules(self) -> str:
        rules = [f"MAP {host} 127.0.0.1:{self.port}" for host in sorted(self.hosts)]
        return ", ".join([*rules, "EXCLUDE localhost"])

    @property
    def spki(self) -> str:
        return self.ca.spki

    def resolve_rules(self) -> list[str]:
        """`HOST:PORT=127.0.0.1:ORIGIN` for every host and port of the archive (`--resolve`)."""
        return [
            f"{host}:{port}=127.0.0.1:{self.port}"
            for host, ports in sorted(self.hosts.items())
            for port in sorted(ports)
        ]

    def pick(self, method: str, url: str) -> tuple[OriginExchange | None, Literal["exact", "path", "miss"]]:
        """The recorded answer to `method url`: by method and URL, then by URL alone where the method
        was not recorded, then the first one recorded for the same path."""
        with self._lock:
            for key in ((method, url), ("*", url)):
                recorded = self._by_url.get(key)
                if recorded:
                    turn = self._served.get(key, 0)
                    self._served[key] = turn + 1
                    return recorded[min(turn, len(recorded) - 1)], "exact"
        path = url.split("?", 1)[0]
        same_path = self._by_path.get((method, path)) or self._by_path.get(("*", path))
        return (same_path, "path") if same_path is not None else (None, "miss")

    def note(self, entry: OriginLogEntry) -> None:
        with self._lock:
            self.log.append(entry)

    def __enter__(self) -> OriginServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
