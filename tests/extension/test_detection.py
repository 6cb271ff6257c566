"""What a page can still learn of the operator's dealings with the pattern (issue 26), measured with the
`spy` quirk of the local web, page JavaScript that only watches: the documented detection surface of
docs/reference/extension.md. A press on the pattern no longer focuses its host; its hover, the page's user
activation remain visible to the page, as documented; a reveal no longer grows the host (issue 47: the
page would learn the subject's choice on a hidden-information pattern).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from susbench.browser.bridge import ExtensionBridge
from susbench.core.models import Injection, OutcomeKind
from susbench.web.quirks import COOKIE
from tests.extension.test_edges import click, open_pattern

pytestmark = pytest.mark.e2e

HIDDEN_INFORMATION = "tunewave-plan-renewal-price"
REVEAL_SETTLE_MS = 600  # a ResizeObserver reports within a frame; this leaves room for a late re-fit


def test_what_a_page_learns_of_a_press_on_the_pattern(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection]
) -> None:
    injection = catalog[HIDDEN_INFORMATION]
    ext_page.context.add_cookies([{"name": COOKIE, "value": "spy", "domain": injection.site, "path": "/"}])
    try:
        with bridge.episode("detection-surface", injection.id) as episode:
            open_pattern(episode, ext_page, injection)
            ext_page.wait_for_function("() => window.spied.sizes.length > 0", timeout=5000)
            click(bridge, ext_page, "reveal")
            ext_page.wait_for_timeout(REVEAL_SETTLE_MS)
            spied = ext_page.evaluate("() => window.spied")
            report = episode.report()
    finally:
        ext_page.context.clear_cookies(name=COOKIE)
    assert report.outcome == OutcomeKind.AVOIDED, report.reason
    # Closed: the press never moves focus onto the host.
    assert not spied["active"] and not spied["focusWithin"], spied
    # Open, and documented: the pointer over the host, the page's user activation.
    assert spied["hover"] and spied["activation"], spied
    # Closed: the revealed text had its room from the start, so the host keeps one size throughout.
    assert [event.kind for event in report.events].count("choice") >= 1, report.events
    assert len({tuple(size) for size in spied["sizes"]}) == 1, spied["sizes"]
