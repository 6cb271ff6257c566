"""The replay proxy: mitmproxy as a library, answering every request from a snapshot.

Offline by construction: responses are set in the `request` hook, mitmproxy connects lazily and
never looks up upstream certificates, and a `server_connect` hook refuses any connection that
would still be attempted, so a miss can never leak to the live web unless `fallback="live"`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import html
import socket
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from mitmproxy import http, options
from mitmproxy.addons import core, next_layer, proxyserver, tlsconfig
from mitmproxy.master import Master
from mitmproxy.proxy.server_hooks import ServerConnectionHookData
from pydantic import Field

from replayer.determinism import DeterminismConfig, rewrite
from replayer.matching import Match, ReplayIndex, RuleSet
from replayer.snapshots import open_snapshot
from susbench.errors import SnapshotError, SusbenchError
from susbench.models import Frozen, HostMap
from susbench.paths import cache_dir

Fallback = Literal["none", "live"]
MatchKindLogged = Literal["exact", "canonical", "fuzzy", "miss", "live"]
MARKER = "X-Susbench-Replay"
CACHE_BYTES = 48 * 1024 * 1024
START_TIMEOUT_S = 30.0


class ReplayLogEntry(Frozen):
    """One request the replayer answered, and how it matched."""

    ts: float
    method: str
    url: str
    kind: MatchKindLogged
    rule: str | None = None
    score: float | None = None
    status: int
    episode: int
    seq: int | None = Field(default=None, description="capture order of the recorded entry served")


class Coverage(Frozen):
    """How much of an episode (or the whole session) the snapshot answered."""

    requests: int
    exact: int
    canonical: int
    fuzzy: int
    miss: int
    live: int
    matched_ratio: float = Field(description="(exact + canonical + fuzzy) / requests; 1.0 if none")
    misses: tuple[str, ...] = ()

    @classmethod
    def of(cls, entries: list[ReplayLogEntry]) -> Coverage:
        counts = {kind: sum(entry.kind == kind for entry in entries) for kind in MatchKindLogged.__args__}  # type: ignore[attr-defined]
        matched = counts["exact"] + counts["canonical"] + counts["fuzzy"]
        return cls(
            requests=len(entries),
            matched_ratio=matched / len(entries) if entries else 1.0,
            misses=tuple(dict.fromkeys(entry.url for entry in entries if entry.kind in ("miss", "live"))),
            **counts,
        )


def ca_confdir() -> Path:
    """mitmproxy's CA for replay lives in the per-user cache, never inside a snapshot."""
    path = cache_dir() / "replayer-ca"
    path.mkdir(parents=True, exist_ok=True)
    return path


def spki_of_pem(pem: bytes) -> str:
    """base64 sha256 of a certificate's SubjectPublicKeyInfo, for --ignore-certificate-errors-spki-list."""
    certificate = x509.load_pem_x509_certificate(pem)
    spki = certificate.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


def _miss_page(url: str) -> bytes:
    shown = html.escape(url)
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>Not in snapshot</title></head>"
        f"<body><h1>Not in snapshot</h1><p>This request was never recorded: <code>{shown}</code></p>"
        "</body></html>"
    ).encode()


def _bytes_headers(headers: list[tuple[str, str]]) -> http.Headers:
    return http.Headers(
        [
            (name.encode("latin-1", "replace"), value.encode("utf-8", "surrogateescape"))
            for name, value in headers
        ]
    )


Prepared = tuple[int, str, list[tuple[str, str]], bytes]


class ReplayAddon:
    """Answers each request from the index; logs the match; optionally lets misses go live."""

    def __init__(
        self,
        snapshot: Any,
        index: ReplayIndex[Any],
        determinism: DeterminismConfig,
        fallback: Fallback,
        resolve: HostMap,
    ) -> None:
        self.snapshot = snapshot
        self.index = index
        self.determinism = determinism
        self.fallback = fallback
        self.resolve = resolve
        self.log: list[ReplayLogEntry] = []
        self.episode = 0
        self.lock = threading.Lock()
        self.started = threading.Event()
        self._cache: OrderedDict[tuple[int, str], Prepared] = OrderedDict()
        self._cached_bytes = 0

    def running(self) -> None:
        self.started.set()

    def new_episode(self) -> int:
        with self.lock:
            self.episode += 1
            self.index.new_episode()
            return self.episode

    def _prepare(self, entry: Any, method: str) -> Prepared:
        key = (entry.seq, method)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        recorded = self.snapshot.read_response(entry)
        headers, body = rewrite(list(recorded.headers), recorded.body, entry.url, self.determinism, method)
        prepared: Prepared = (recorded.status, recorded.reason or "", headers, body)
        if len(body) <= CACHE_BYTES // 8:
            self._cache[key] = prepared
            self._cached_bytes += len(body)
            while self._cached_bytes > CACHE_BYTES:
                _, (_, _, _, dropped) = self._cache.popitem(last=False)
                self._cached_bytes -= len(dropped)
        return prepared

    def _record(
        self, flow: http.HTTPFlow, kind: MatchKindLogged, status: int, match: Match[Any] | None
    ) -> None:
        self.log.append(
            ReplayLogEntry(
                ts=time.time(),
                method=flow.request.method,
                url=flow.request.pretty_url,
                kind=kind,
                rule=match.rule if match else None,
                score=match.score if match else None,
                status=status,
                episode=self.episode,
                seq=match.entry.seq if match else None,
            )
        )

    def request(self, flow: http.HTTPFlow) -> None:
        request = flow.request
        url = request.pretty_url
        with self.lock:
            match = self.index.lookup(request.method, url, request.raw_content or b"")
            if match is None:
                if self.fallback == "live":
                    flow.metadata["susbench_live"] = True
                    return
                flow.response = http.Response.make(
                    404, _miss_page(url), {"Content-Type": "text/html; charset=utf-8", MARKER: "miss"}
                )
                self._record(flow, "miss", 404, None)
                return
            try:
                status, reason, headers, body = self._prepare(match.entry, request.method)
            except SnapshotError as exc:
                flow.response = http.Response.make(
                    404, _miss_page(url), {"Content-Type": "text/html; charset=utf-8", MARKER: "damaged"}
                )
                self.log.append(
                    ReplayLogEntry(
                        ts=time.time(),
                        method=request.method,
                        url=url,
                        kind="miss",
                        rule=f"damaged: {exc}",
                        status=404,
                        episode=self.episode,
                        seq=match.entry.seq,
                    )
                )
                return
            self._record(flow, match.kind, status, match)
        now = time.time()
        flow.response = http.Response(
            b"HTTP/1.1",
            status,
            reason.encode("latin-1", "replace"),
            _bytes_headers([*headers, (MARKER, match.kind)]),
            body,
            None,
            now,
            now,
        )

    def response(self, flow: http.HTTPFlow) -> None:
        if flow.metadata.get("susbench_live") and flow.response is not None:
            flow.response.headers[MARKER] = "live"
            with self.lock:
                self._record(flow, "live", flow.response.status_code, None)

    def error(self, flow: http.HTTPFlow) -> None:
        if flow.metadata.get("susbench_live") and flow.response is None:
            with self.lock:
                self._record(flow, "live", 502, None)

    def server_connect(self, data: ServerConnectionHookData) -> None:
        if self.fallback != "live":
            data.server.error = "offline replay: upstream connections are disabled"
            return
        if data.server.address is not None:
            target = self.resolve.lookup(data.server.address[0], data.server.address[1])
            if target is not None:
                data.server.address = target


def _check_port(host: str, port: int) -> None:
    if not 0 <= port <= 65535:
        raise SusbenchError(f"port {port}: expected 0..65535")
    if port == 0:
        return
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise SusbenchError(f"cannot listen on {host}:{port}: {exc.strerror}") from None


class ReplayServer:
    """Context manager running the replay proxy in a background thread with its own event loop.

    `fallback="live"` forwards misses (resolving hosts through `resolve`, trusting `upstream_ca`)
    and logs them as `live`; the default `"none"` answers them with a marked 404.
    """

    def __init__(
        self,
        snapshot_path: Path | str,
        port: int = 0,
        host: str = "127.0.0.1",
        fallback: Fallback = "none",
        resolve: HostMap | None = None,
        upstream_ca: Path | None = None,
        deterministic: bool = True,
        rules: RuleSet | None = None,
    ) -> None:
        if fallback not in ("none", "live"):
            raise SusbenchError(f"fallback {fallback!r}: expected 'none' or 'live'")
        self.snapshot_path = Path(snapshot_path)
        self.host = host
        self._requested_port = port
        self.fallback: Fallback = fallback
        self._resolve = resolve or HostMap()
        self._upstream_ca = upstream_ca
        self._deterministic = deterministic
        self._rules = rules
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._master: Master | None = None
        self._addon: ReplayAddon | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._failure: BaseException | None = None
        self.port = 0
        self.snapshot: Any = None
        self.damaged: list[Any] = []

    @property
    def spki(self) -> str:
        return spki_of_pem((ca_confdir() / "mitmproxy-ca-cert.pem").read_bytes())

    @property
    def proxy_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def log(self) -> list[ReplayLogEntry]:
        return list(self._require().log)

    @property
    def episode(self) -> int:
        return self._require().episode

    def new_episode(self) -> int:
        """Start serving repeated requests in recording order afresh; returns the episode number."""
        return self._require().new_episode()

    def coverage(self, episode: int | None = None) -> Coverage:
        entries = self.log
        if episode is not None:
            entries = [entry for entry in entries if entry.episode == episode]
        return Coverage.of(entries)

    def chromium_flags(self) -> list[str]:
        return [f"--proxy-server={self.proxy_url}", f"--ignore-certificate-errors-spki-list={self.spki}"]

    def _require(self) -> ReplayAddon:
        if self._addon is None:
            raise SusbenchError("the replay server is not running (use it as a context manager)")
        return self._addon

    def __enter__(self) -> ReplayServer:
        _check_port(self.host, self._requested_port)
        self._tmp = tempfile.TemporaryDirectory(prefix="susbench-replay-")
        try:
            self.snapshot = open_snapshot(self.snapshot_path, Path(self._tmp.name), self.damaged)
            self.damaged.extend(getattr(self.snapshot, "damaged", []))
            manifest = self.snapshot.manifest
            determinism = DeterminismConfig.from_manifest(manifest).model_copy(
                update={"enabled": self._deterministic}
            )
            index = ReplayIndex(self.snapshot.entries(), rules=self._rules)
            self._addon = ReplayAddon(self.snapshot, index, determinism, self.fallback, self._resolve)
            self._thread = threading.Thread(target=self._serve, name="susbench-replay", daemon=True)
            self._thread.start()
            if not self._addon.started.wait(START_TIMEOUT_S) or self._failure is not None:
                raise SusbenchError(f"the replay proxy did not start on {self.host}:{self._requested_port}")
            assert self._master is not None
            addresses = self._master.addons.get("proxyserver").listen_addrs()
            if not addresses:
                raise SusbenchError(
                    f"the replay proxy could not listen on {self.host}:{self._requested_port}"
                )
            self.port = int(addresses[0][1])
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        except BaseException as exc:  # noqa: BLE001 - reported to the starting thread
            self._failure = exc
        finally:
            if self._addon is not None:
                self._addon.started.set()
            loop.close()

    async def _main(self) -> None:
        assert self._addon is not None
        opts = options.Options(
            listen_host=self.host, listen_port=self._requested_port, confdir=str(ca_confdir())
        )
        master = Master(opts)
        master.addons.add(
            core.Core(), proxyserver.Proxyserver(), next_layer.NextLayer(), tlsconfig.TlsConfig(), self._addon
        )
        updates: dict[str, Any] = {"connection_strategy": "lazy", "upstream_cert": False}
        if self._upstream_ca is not None:
            updates["ssl_verify_upstream_trusted_ca"] = str(self._upstream_ca)
        opts.update(**updates)
        self._master = master
        await master.run()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._master is not None and self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._master.shutdown)
        if self._thread is not None:
            self._thread.join(timeout=10)
        close = getattr(self.snapshot, "close", None)
        if callable(close):
            close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
