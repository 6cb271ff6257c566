"""The recording proxy's per-host rate limit, through real mitmproxy to a loopback shop."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from mitmproxy.exceptions import OptionsError
from mitmproxy.options import Options
from mitmproxy.tools.dump import DumpMaster

from susbench.core.errors import SusbenchError
from susbench.core.models import HostMap
from susbench.recorder.proxy import RecordingProxy, option_refused
from tests.support.unseen_shop import UnseenShop

RATE = 4.0
BURST = 2
REQUESTS = 6


def test_requests_to_a_host_are_spaced_after_a_burst(unseen_shop: UnseenShop) -> None:
    url = f"{unseen_shop.start_url}robots.txt"
    with RecordingProxy(host_map=HostMap.parse([unseen_shop.resolve]), rate=RATE, burst=BURST) as proxy:
        started = time.monotonic()
        answers = [proxy.fetch(url, {"User-Agent": "ratelimit-test"})[0] for _ in range(REQUESTS)]
        elapsed = time.monotonic() - started
        logged = [entry for entry in proxy.log if entry.url == url]
    assert answers == [200] * REQUESTS and len(logged) == REQUESTS
    # the last request may start only (REQUESTS - BURST) intervals after the burst's first
    assert elapsed >= (REQUESTS - BURST) / RATE - 0.05, elapsed


def test_a_negative_rate_is_refused_naming_the_option() -> None:
    with pytest.raises(SusbenchError) as refused, RecordingProxy(rate=-1.0):
        pass
    assert str(refused.value) == "recording proxy option host_rate: -1.0: expected 0 or more"


def test_mitmproxys_own_refusal_names_the_option(tmp_path: Path) -> None:
    """mitmproxy's text names a path, not the option: the error names the option it came from."""
    missing = str(tmp_path / "client.pem")

    async def refuse() -> OptionsError:
        master = DumpMaster(Options(), with_termlog=False, with_dumper=False)
        with pytest.raises(OptionsError) as raised:
            master.options.update(client_certs=missing)
        return raised.value

    with ThreadPoolExecutor(1) as own_loop:  # this thread may hold the suite's Playwright loop
        refused = own_loop.submit(lambda: asyncio.run(refuse())).result()
    error = option_refused(refused, {"http2": True, "client_certs": missing})
    assert str(error).startswith(f"recording proxy option client_certs: '{missing}': ")
    assert "does not exist" in str(error)
