"""The same pixels on every load: the pattern's drawing does not depend on what the page's scripts
finish before it is drawn. voltcart's product page answers its stock check ("Checking availability…",
then "In stock") after parsing, sooner or later, inside the neighbourhood the look reads its type from;
drawn from whichever words were there, the panel was 67.5 or 69 px tall from load to load, live and
replayed alike (issue 47)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import Page, Playwright

from susbench.browser import LocalBackend
from susbench.browser.bridge import ExtensionBridge
from susbench.browser.profiles import replay_profile
from susbench.controller.options import default_snapshot
from susbench.core.models import Injection
from susbench.replayer.factory import replay_server
from susbench.replayer.service import ReplayService
from tests.support.drawing import panel_pixels

pytestmark = pytest.mark.e2e

INJECTION = "voltcart-item-protection-plan"
STOCK = "**/api/stock/**"
PICTURES = "**/img/**"  # held, the page's load waits, and the extension draws a moment after parsing
TRIES = 4

# The page's own view of the order: its stock check answered (its words replaced), and the
# pattern's host put before the buy button (a bare <div>, the only one the page gains in its form).
ORDER = """(() => {
  const order = [];
  Object.defineProperty(window, "__order", { value: order });
  new MutationObserver((records) => {
    for (const record of records) {
      if (record.target.matches?.(".stock") && record.removedNodes.length) order.push("answered");
      for (const node of record.addedNodes) {
        const bare = node.nodeName === "DIV" && !node.attributes.length;
        if (bare && node.parentElement?.matches("form.add-to-cart")) order.push("drawn");
      }
    }
  }).observe(document, { childList: true, subtree: true });
})();"""


def first(page: Page) -> str:
    order = page.evaluate("window.__order")
    assert {"answered", "drawn"} <= set(order), order
    return str(order[0])


@pytest.fixture(scope="module")
def replayed(
    web_playwright: Playwright, extension_dir: Path
) -> Iterator[tuple[ExtensionBridge, Page, ReplayService]]:
    """The extension on the bundled snapshot, replayed direct."""
    with replay_server(default_snapshot(), "direct") as server:
        profile = replay_profile(server).model_copy(update={"extension_dir": extension_dir})
        with LocalBackend(web_playwright).launch(profile) as session:
            page = session.context.new_page()
            yield ExtensionBridge(session.context), page, server
            page.close()


@pytest.mark.parametrize("web", ["live", "replayed"])
def test_the_drawing_is_the_same_whenever_the_page_answers_its_stock_check(
    web: str, request: pytest.FixtureRequest, catalog: dict[str, Injection]
) -> None:
    bridge, page, server = (
        (request.getfixturevalue("bridge"), request.getfixturevalue("ext_page"), None)
        if web == "live"
        else request.getfixturevalue("replayed")
    )
    page.add_init_script(ORDER)
    injection = catalog[INJECTION]

    def load(hold: str) -> np.ndarray:
        if server:
            server.new_episode()
        return panel_pixels(bridge, page, injection, hold=hold)

    late = load(STOCK)
    assert first(page) == "drawn"
    for _ in range(TRIES):
        early = load(PICTURES)
        if first(page) == "answered":
            break
    else:
        pytest.fail(f"the stock check was answered after the drawing in {TRIES} loads of {TRIES}")
    assert early.shape == late.shape
    assert np.array_equal(early, late), (
        f"{(np.abs(early - late).max(axis=2) > 0).mean():.1%} of the panel's pixels differ"
    )
