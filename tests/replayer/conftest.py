"""The replayer tests' fixture: the local web recorded once per session (tests/support/replay.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from playwright.sync_api import Playwright

from susbench.browser import ProxyRoute, fresh_context, launch_browser, routed_profile
from susbench.core.models import PageCapture
from susbench.recorder.proxy import RecordingProxy
from susbench.web import SITES, LocalWeb
from tests.support.replay import RECORD_DAY_NOON_MS, RecordedWeb, settle


@pytest.fixture(scope="session")
def recorded_web(
    local_web: LocalWeb, web_playwright: Playwright, tmp_path_factory: pytest.TempPathFactory
) -> RecordedWeb:
    """Every site's home and first product page, plus an add-to-cart → cart flow on one site."""
    out = tmp_path_factory.mktemp("recorded-web") / "localweb.wacz"
    visited: list[PageCapture] = []
    post_site = SITES[0].host
    with RecordingProxy(host_map=local_web.resolve, upstream_ca=local_web.ca_cert_path) as recorder:
        profile = routed_profile(
            ProxyRoute(proxy_url=f"http://127.0.0.1:{recorder.port}", spki=recorder.spki)
        )
        with launch_browser(web_playwright, profile) as browser:
            context = fresh_context(browser, profile)
            page = context.new_page()
            for site in SITES:
                page.goto(site.start_url)
                settle(page)
                visited.append(PageCapture(url=page.url, title=page.title(), captured_at=datetime.now(UTC)))
                page.click(".product-card a.product-link >> nth=0")
                page.wait_for_load_state("load")
                settle(page)
                visited.append(PageCapture(url=page.url, title=page.title(), captured_at=datetime.now(UTC)))
                if site.host == post_site:
                    page.click("form.add-to-cart button.add-to-cart-btn")
                    page.wait_for_url("**/cart")
                    settle(page)
            context.close()
        recorder.write_snapshot(out, clock_seed_ms=RECORD_DAY_NOON_MS, pages=tuple(visited))
    return RecordedWeb(path=out, pages=tuple(page.url for page in visited), post_site=post_site)
