"""What a page can still learn of the operator's dealings with the pattern (issue 26), measured with the
`spy` quirk of the local web, page JavaScript that only watches: the documented detection surface of
docs/reference/extension.md. A press on the pattern no longer focuses its host; its hover, the page's user
activation and the host's growth on a reveal remain visible to the page, as documented.
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


def test_what_a_page_learns_of_a_press_on_the_pattern(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection]
) -> None:
    injection = catalog[HIDDEN_INFORMATION]
    ext_page.context.add_cookies([{"name": COOKIE, "value": "spy", "domain": injection.site, "path": "/"}])
    try:
        with bridge.episode("detection-surface", injection.id) as episode:
            open_pattern(episode, ext_page, injection)
            click(bridge, ext_page, "reveal")
            ext_page.wait_for_function("() => new Set(window.spied.sizes.map(String)).size > 1", timeout=5000)
            spied = ext_page.evaluate("() => window.spied")
            report = episode.report()
    finally:
        ext_page.context.clear_cookies(name=COOKIE)
    assert report.outcome == OutcomeKind.AVOIDED, report.reason
    # Closed: the press never moves focus onto the host.
    assert not spied["active"] and not spied["focusWithin"], spied
    # Open, and documented: the pointer over the host, the page's user activation, the host's growth.
    assert spied["hover"] and spied["activation"], spied
    heights = [height for _, height in spied["sizes"]]
    assert max(heights) > min(heights) > 0, spied["sizes"]
