"""The replay proxy: mitmproxy as a library, answering every request from a snapshot.

Offline by construction: responses are set in the `request` hook, mitmproxy connects lazily and
never looks up upstream certificates, and a `server_connect` hook refuses any connection that
would still be attempted, so a miss can never leak to the live web unless `fallback="live"`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from mitmproxy import http, options
from mitmproxy.addons import core, next_layer, proxyserver, tlsconfig
from mitmproxy.master import Master
from mitmproxy.proxy.server_hooks import ServerConnectionHookData

from susbench.core.certs import mitmproxy_ca_pin, private_dir
from susbench.core.errors import SusbenchError
from susbench.core.hostmap import HostMapAddon
from susbench.core.models import HostMap
from susbench.core.paths import cache_dir
from susbench.replayer.matching import RuleSet
from susbench.replayer.service import MARKER, Coverage, ReplayLogEntry, Responder, ThreadedReplayServer

Fallback = Literal["none", "live"]

__all__ = ["MARKER", "Coverage", "Fallback", "ReplayLogEntry", "ReplayServer"]


def ca_confdir() -> Path:
    """mitmproxy's CA for replay lives in the per-user cache, never inside a snapshot."""
    return private_dir(cache_dir() / "replayer-ca")


class ReplayAddon:
    """Answers each request through the shared Responder; optionally lets misses go live."""

    def __init__(self, responder: Responder, fallback: Fallback, on_running: Callable[[], None]) -> None:
        self.responder = responder
        self.fallback = fallback
        self._on_running = on_running

    def running(self) -> None:
        self._on_running()

    def request(self, flow: http.HTTPFlow) -> None:
        request = flow.request
        reply = self.responder.answer(
            request.method, request.pretty_url, request.raw_content or b"", self.fallback == "live"
        )
        if reply is None:
            flow.metadata["susbench_live"] = True
            return
        now = time.time()
        flow.response = http.Response(
            b"HTTP/1.1",
            reply.status,
            reply.reason.encode("latin-1", "replace"),
            http.Headers(
                [
                    (name.encode("latin-1", "replace"), value.encode("utf-8", "surrogateescape"))
                    for name, value in reply.headers
                ]
            ),
            reply.body,
            None,
            now,
            now,
        )

    def response(self, flow: http.HTTPFlow) -> None:
        if flow.metadata.get("susbench_live") and flow.response is not None:
            flow.response.headers[MARKER] = "live"
            self.responder.note_live(flow.request.method, flow.request.pretty_url, flow.response.status_code)

    def error(self, flow: http.HTTPFlow) -> None:
        if flow.metadata.get("susbench_live") and flow.response is None:
            self.responder.note_live(flow.request.method, flow.request.pretty_url, 502)

    def server_connect(self, data: ServerConnectionHookData) -> None:
        if self.fallback != "live":
            data.server.error = "offline replay: upstream connections are disabled"


class ReplayServer(ThreadedReplayServer):
    """The replay proxy (mitmproxy in a background thread): works for any browser pointed at it.

    HTTP/2 is not offered to the browser: mitmproxy's pure-Python HTTP/2 framing made page loads
    ~1.9x slower than the extra HTTP/1.1 connections do (benchmarks/replay_bench.py).
    `fallback="live"` forwards misses (resolving hosts through `resolve`, trusting `upstream_ca`)
    and logs them as `live`; the default `"none"` answers them with a marked 404.
    """

    name = "replay proxy"
    host_resolver_rules: str | None = None

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
        super().__init__(snapshot_path, port, host, deterministic, rules)
        self.fallback: Fallback = fallback
        self._resolve = resolve or HostMap()
        self._upstream_ca = upstream_ca
        self._master: Master | None = None

    @property
    def spki(self) -> str:
        return mitmproxy_ca_pin(ca_confdir())

    @property
    def proxy_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def chromium_flags(self) -> list[str]:
        return [f"--proxy-server={self.proxy_url}", f"--ignore-certificate-errors-spki-list={self.spki}"]

    async def _main(self) -> None:
        addon = ReplayAddon(self._require(), self.fallback, self._running)
        opts = options.Options(
            listen_host=self.host, listen_port=self._requested_port, confdir=str(ca_confdir())
        )
        master = Master(opts)
        master.addons.add(
            core.Core(),
            proxyserver.Proxyserver(),
            next_layer.NextLayer(),
            tlsconfig.TlsConfig(),
            HostMapAddon(),
            addon,
        )
        updates: dict[str, Any] = {
            "connection_strategy": "lazy",
            "upstream_cert": False,
            "http2": False,
            "resolve": self._resolve.as_args(),
        }
        if self._upstream_ca is not None:
            updates["ssl_verify_upstream_trusted_ca"] = str(self._upstream_ca)
        opts.update(**updates)
        self._master = master
        await master.run()

    def _running(self) -> None:
        assert self._master is not None
        addresses = self._master.addons.get("proxyserver").listen_addrs()
        if addresses:
            self.port = int(addresses[0][1])
        self._listening()

    def _stop(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._master is not None:
            loop.call_soon_threadsafe(self._master.shutdown)
