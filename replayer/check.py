"""Load every page of a snapshot in headless Chromium through the replayer and measure coverage."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Browser, Playwright
from playwright.sync_api import Error as PlaywrightError
from pydantic import Field

from susbench.browser import (
    BrowserProfile,
    browser_failure,
    fresh_context,
    launch_browser,
    playwright_driver,
    replay_profile,
)
from susbench.core.models import Frozen
from susbench.core.models import ReplayMode as Mode
from susbench.replayer.factory import replay_server
from susbench.replayer.service import Coverage

SETTLE_MS = 3000
STARTUP_NOISE_S = 1.0


class PageCoverage(Frozen):
    """One page load: the page URL, its coverage, and an error if it did not load at all."""

    url: str
    coverage: Coverage
    site: Coverage = Field(
        description="the requests to the snapshot's own hosts: what the page asked for, without "
        "Chromium's own lookups (accounts.google.com) that no flag reliably silences"
    )
    error: str | None = None


def page_urls(snapshot: Any) -> list[tuple[str, str | None]]:
    """The snapshot's pages with the browser session each was visited in (pages.jsonl / manifest);
    else every recorded HTML document."""
    pages = [(page.url, page.session) for page in snapshot.manifest.pages]
    if pages:
        return list(dict.fromkeys(pages))
    html = [
        (entry.url, entry.session)
        for entry in snapshot.entries()
        if entry.method == "GET" and entry.status == 200 and "html" in (entry.mime or "")
    ]
    return list(dict.fromkeys(html))


def load_page(
    browser: Browser, profile: BrowserProfile, url: str, timeout_s: float, screenshot: Path | None = None
) -> str | None:
    """Open `url` in a fresh context and let it settle (then take a full-page screenshot, if asked);
    returns an error text or None."""
    context = fresh_context(browser, profile)
    try:
        page = context.new_page()
        page.goto(url, wait_until="load", timeout=timeout_s * 1000)
        with suppress(PlaywrightError):
            page.wait_for_load_state("networkidle", timeout=SETTLE_MS)
        if screenshot is not None:
            page.screenshot(path=screenshot, full_page=True)
        return None
    except PlaywrightError as exc:
        return browser_failure(exc.message)
    finally:
        context.close()


def check_snapshot(
    path: Path,
    timeout_s: float = 30.0,
    mode: Mode = "proxy",
    playwright: Playwright | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[PageCoverage]:
    """Coverage of every page of the snapshot, one replay episode (in the page's session) per page.

    Chromium's own start-up requests (sign-in, time) fall into episode 0, before the first page;
    the ones it makes later are left out of each page's `site` coverage. Pass `playwright` to reuse
    a running driver (the sync API allows one per thread); `progress` hears of each page loaded.
    """
    results = []
    with replay_server(path, mode) as server, playwright_driver(playwright) as driver:
        profile = replay_profile(server)
        hosts = set(server.snapshot.manifest.hosts)
        with launch_browser(driver, profile) as browser:
            time.sleep(STARTUP_NOISE_S)
            pages = page_urls(server.snapshot)
            for number, (url, session) in enumerate(pages, start=1):
                episode_number = server.new_episode(session)
                error = load_page(browser, profile, url, timeout_s)
                if progress:
                    progress(f"{number}/{len(pages)} {url}" + (f": {error}" if error else ""))
                own = [e for e in server.episode_log(episode_number) if urlsplit(e.url).hostname in hosts]
                results.append(
                    PageCoverage(
                        url=url,
                        coverage=server.coverage(episode_number),
                        site=Coverage.of(own) if hosts else server.coverage(episode_number),
                        error=error,
                    )
                )
    return results
