"""The drawn pattern's panel as painted, one page load each: what tests of the drawing's pixels compare."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image
from playwright.sync_api import Page, Route

from susbench.browser.bridge import ExtensionBridge
from susbench.core.models import Injection
from susbench.web.quirks import COOKIE


def panel_pixels(
    bridge: ExtensionBridge,
    page: Page,
    injection: Injection,
    quirk: str | None = None,
    hold: str | None = None,
) -> np.ndarray:
    """The panel of `injection`'s pattern on its example page, with the local web's `quirk` switched on
    (None: the plain page); `hold`, a URL glob whose requests wait until the pattern is drawn."""
    if quirk:
        page.context.add_cookies([{"name": COOKIE, "value": quirk, "domain": injection.site, "path": "/"}])
    held: list[Route] = []

    def keep(route: Route) -> None:
        held.append(route)

    if hold:
        page.route(hold, keep)
    try:
        with bridge.episode(f"pixels-{quirk}", injection.id) as episode:
            page.goto(str(injection.page.example), wait_until="commit")
            assert bridge.choices(page, wait=5.0), "the pattern was not drawn"
            if hold:
                for route in held:
                    route.continue_()
                page.unroute(hold, keep)
            page.wait_for_load_state("load")
            box = bridge.panel(page, scroll=True)
            assert box is not None and episode.wait_for_exposure()
            page.wait_for_timeout(300)
            clip = {"x": box.x, "y": box.y, "width": box.width, "height": box.height}
            return np.asarray(
                Image.open(io.BytesIO(page.screenshot(clip=clip))).convert("RGB"), dtype=np.int16
            )
    finally:
        page.context.clear_cookies(name=COOKIE)
