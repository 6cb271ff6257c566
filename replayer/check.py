"""Load every page of a snapshot in headless Chromium through the replayer and measure coverage."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Playwright
from playwright.sync_api import Error as PlaywrightError

from replayer.direct import DirectReplayServer
from replayer.proxy import ReplayServer
from replayer.service import Coverage, ReplayService
from susbench.browser import BrowserProfile, find_chromium, playwright_driver
from susbench.errors import BrowserError
from susbench.models import Frozen
from susbench.models import ReplayMode as Mode

SETTLE_MS = 3000
STARTUP_NOISE_S = 1.0


class PageCoverage(Frozen):
    """One page load: the page URL, its coverage, and an error if it did not load at all."""

    url: str
    coverage: Coverage
    error: str | None = None


def page_urls(snapshot: Any) -> list[str]:
    """The snapshot's pages (pages.jsonl / manifest); else every recorded HTML document."""
    urls = [page.url for page in snapshot.manifest.pages]
    if urls:
        return list(dict.fromkeys(urls))
    html = [
        entry.url
        for entry in snapshot.entries()
        if entry.method == "GET" and entry.status == 200 and "html" in (entry.mime or "")
    ]
    return list(dict.fromkeys(html))


def replay_server(path: Path, mode: Mode = "proxy", port: int = 0, host: str = "127.0.0.1") -> ReplayService:
    """The replayer for `mode`: the proxy (any browser) or direct (a Chromium we launch)."""
    if mode == "direct":
        return DirectReplayServer(path, port=port, host=host)
    return ReplayServer(path, port=port, host=host)


def replay_profile(server: ReplayService) -> BrowserProfile:
    """Chromium sending everything (loopback included) to the replayer, trusting only its key.

    Through the proxy, or (direct mode) with every host resolved to the replayer.

    Chromium keeps only the last --disable-features flag, so the quiet list is repeated in full
    with autofill's and network time's server lookups added (they would show up as misses in
    every coverage report) and automatic https upgrades of recorded http:// pages off.
    """
    manifest = server.snapshot.manifest
    return BrowserProfile(
        proxy=server.proxy_url,
        proxy_bypass_loopback=server.proxy_url is not None,
        host_resolver_rules=server.host_resolver_rules,
        spki_pins=(server.spki,),
        timezone=manifest.timezone,
        locale=manifest.locale,
        viewport=manifest.viewport,
    )


@contextmanager
def launch_browser(playwright: Playwright, profile: BrowserProfile) -> Iterator[Browser]:
    """A plain (non-persistent) Chromium with the profile's flags, so each load gets a fresh context."""
    executable = profile.executable or find_chromium()
    try:
        browser = playwright.chromium.launch(
            executable_path=str(executable), headless=profile.headless, args=profile.args()
        )
    except PlaywrightError as exc:
        raise BrowserError(f"{executable}: Chromium failed to start: {exc}") from None
    try:
        yield browser
    finally:
        browser.close()


def fresh_context(browser: Browser, profile: BrowserProfile) -> BrowserContext:
    """A new context with the profile's viewport, locale and time zone; service workers blocked."""
    return browser.new_context(
        viewport={"width": profile.viewport.width, "height": profile.viewport.height},
        locale=profile.locale,
        timezone_id=profile.timezone,
        service_workers="block",
    )


def load_page(browser: Browser, profile: BrowserProfile, url: str, timeout_s: float) -> str | None:
    """Open `url` in a fresh context and let it settle; returns an error text or None."""
    context = fresh_context(browser, profile)
    try:
        page = context.new_page()
        page.goto(url, wait_until="load", timeout=timeout_s * 1000)
        with suppress(PlaywrightError):
            page.wait_for_load_state("networkidle", timeout=SETTLE_MS)
        return None
    except PlaywrightError as exc:
        return str(exc).splitlines()[0]
    finally:
        context.close()


def check_snapshot(
    path: Path, timeout_s: float = 30.0, mode: Mode = "proxy", playwright: Playwright | None = None
) -> list[PageCoverage]:
    """Coverage of every page of the snapshot, one replay episode per page.

    Chromium's own start-up requests (sign-in, time) fall into episode 0, before the first page.
    Pass `playwright` to reuse a running driver (the sync API allows one per thread).
    """
    results = []
    with replay_server(path, mode) as server, playwright_driver(playwright) as driver:
        profile = replay_profile(server)
        with launch_browser(driver, profile) as browser:
            time.sleep(STARTUP_NOISE_S)
            for url in page_urls(server.snapshot):
                episode = server.new_episode()
                error = load_page(browser, profile, url, timeout_s)
                results.append(PageCoverage(url=url, coverage=server.coverage(episode), error=error))
    return results
