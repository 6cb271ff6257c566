"""Record the local web, then replay it offline in Chromium: coverage, no leaks, determinism, drift."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from contextlib import suppress
from datetime import date
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright
from playwright.sync_api import Error as PlaywrightError

from susbench.replayer.check import STARTUP_NOISE_S, fresh_context, launch_browser, replay_profile
from susbench.replayer.proxy import Coverage, ReplayServer
from susbench.web import LocalWeb
from tests.support.replay import SETTLE_MS, RecordedWeb

pytestmark = pytest.mark.e2e
REPEATS = 20


@pytest.fixture(scope="module")
def server(recorded_web: RecordedWeb) -> Iterator[ReplayServer]:
    with ReplayServer(recorded_web.path) as running:
        yield running


@pytest.fixture(scope="module")
def browser(server: ReplayServer, web_playwright: Playwright) -> Iterator[Browser]:
    with launch_browser(web_playwright, replay_profile(server)) as launched:
        time.sleep(STARTUP_NOISE_S)
        yield launched


def fresh(browser: Browser, server: ReplayServer) -> BrowserContext:
    return fresh_context(browser, replay_profile(server))


def open_settled(context: BrowserContext, url: str) -> Page:
    page = context.new_page()
    page.goto(url, wait_until="load")
    with suppress(PlaywrightError):
        page.wait_for_load_state("networkidle", timeout=SETTLE_MS)
    return page


def test_every_page_renders_from_the_snapshot_alone(
    server: ReplayServer, browser: Browser, recorded_web: RecordedWeb, local_web: LocalWeb
) -> None:
    """Coverage counts the pages' requests (the recorded sites' hosts), not Chromium's own sign-in
    lookups to accounts.google.com, which no flag reliably silences and no site asked for."""
    before = local_web.connections
    hosts = set(server.snapshot.manifest.hosts)
    for url in recorded_web.pages:
        episode_number = server.new_episode()
        context = fresh(browser, server)
        try:
            page = open_settled(context, url)
            assert page.locator("main#main").count() == 1, url
        finally:
            context.close()
        coverage = Coverage.of(
            [
                entry
                for entry in server.log
                if entry.episode_number == episode_number and urlsplit(entry.url).hostname in hosts
            ]
        )
        assert coverage.requests >= 3, url
        assert coverage.matched_ratio >= 0.99, (url, coverage.misses)
    assert local_web.connections == before, "the replayer reached the origin"
    assert any(entry.kind == "canonical" and "cache-buster" in (entry.rule or "") for entry in server.log)


def test_twenty_replays_are_byte_and_pixel_identical(
    server: ReplayServer, browser: Browser, recorded_web: RecordedWeb
) -> None:
    url = recorded_web.pages[1]
    doms, shots = set(), set()
    for _ in range(REPEATS):
        server.new_episode()
        context = fresh(browser, server)
        try:
            page = open_settled(context, url)
            doms.add(hashlib.sha256(page.content().encode()).hexdigest())
            shots.add(hashlib.sha256(page.screenshot(full_page=True, animations="disabled")).hexdigest())
        finally:
            context.close()
    assert len(doms) == 1 and len(shots) == 1


def test_post_flow_replays(server: ReplayServer, browser: Browser, recorded_web: RecordedWeb) -> None:
    product = next(url for url in recorded_web.pages if recorded_web.post_site in url and url.count("/") > 3)
    server.new_episode()
    context = fresh(browser, server)
    try:
        page = open_settled(context, product)
        title = page.inner_text("h1.product-title")
        page.click("form.add-to-cart button.add-to-cart-btn")
        page.wait_for_url("**/cart")
        assert title in page.inner_text(".cart-items")
    finally:
        context.close()
    posts = [entry for entry in server.log if entry.method == "POST"]
    assert posts and posts[-1].kind in ("exact", "canonical")


def test_drifted_origin_does_not_change_the_replayed_day(
    server: ReplayServer, browser: Browser, recorded_web: RecordedWeb
) -> None:
    with LocalWeb(port=0, date="2027-03-01", seed=0) as drifted:
        server.new_episode()
        context = fresh(browser, server)
        try:
            page = open_settled(context, recorded_web.pages[0])
            today = page.evaluate("new Date().toDateString()")
        finally:
            context.close()
        assert drifted.connections == 0
    assert today == date(2026, 11, 29).strftime("%a %b %d %Y")
