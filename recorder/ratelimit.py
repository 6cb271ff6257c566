"""A per-host rate limit inside the recording proxy, so a recorded site gets a polite request rate
whatever the page asks the browser to fetch.

Generic cell rate algorithm (a token bucket in one number per host): each request reserves the next
free slot of its host and waits for it, so at most `host_burst` requests of a host go at once and
then one every 1/`host_rate` seconds. mitmproxy runs hooks on one event loop, so a reservation is
atomic. Only loaded as part of `susbench.recorder.warc_addon`, which declares the options.
"""

from __future__ import annotations

import asyncio
import time

from mitmproxy import exceptions, http
from mitmproxy.addonmanager import Loader
from mitmproxy.options import Options


class HostRateLimit:
    """Delays requests so no host gets more than `host_rate` per second after a `host_burst`."""

    def __init__(self) -> None:
        self._options = Options()
        self._due: dict[str, float] = {}
        self.waited_s = 0.0

    def load(self, loader: Loader) -> None:
        self._options = loader.master.options
        loader.add_option(
            "host_rate", float, 0.0, "Requests per second per host at most, after a burst; 0: no limit."
        )
        loader.add_option("host_burst", int, 1, "Requests a host may get at once before host_rate applies.")

    def configure(self, updated: set[str]) -> None:
        if "host_rate" in updated and self._options.host_rate < 0:
            raise exceptions.OptionsError(f"host_rate: {self._options.host_rate}: expected 0 or more")
        if "host_burst" in updated and self._options.host_burst < 1:
            raise exceptions.OptionsError(f"host_burst: {self._options.host_burst}: expected 1 or more")

    async def requestheaders(self, flow: http.HTTPFlow) -> None:
        rate = self._options.host_rate
        if rate <= 0:
            return
        interval = 1.0 / rate
        now = time.monotonic()
        due = max(self._due.get(flow.request.pretty_host, now), now)
        wait = due - (self._options.host_burst - 1) * interval - now
        self._due[flow.request.pretty_host] = due + interval
        if wait > 0:
            self.waited_s += wait
            await asyncio.sleep(wait)
