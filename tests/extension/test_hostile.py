"""Outcomes the page cannot bend (issue 16): every case of tests/data/hostile_cases.yaml, a hostile or
quirky page behaviour of the local web met by a real scripted operator clicking by coordinates or by
locator, scores what the rules define; and the pattern leaves no copied look on its host.

`pytest tests/extension/test_hostile.py --extension-at 337f432` runs the same pages against the
extension as it was when the attacks were found.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Page

from susbench.browser import BrowserSession
from susbench.browser.actions import ClickMode
from susbench.browser.bridge import ExtensionBridge, ExtensionReport
from susbench.core.models import Injection, Task
from susbench.web.quirks import COOKIE
from tests.support.episode_evidence import ChoiceLog, as_json, event_lines, story, told_on_failure
from tests.support.hostile_cases import HostileCase, host_look, load_cases, run_case

pytestmark = pytest.mark.e2e

CASES = load_cases()


@pytest.mark.parametrize(("case", "clicks"), CASES, ids=[case.name(clicks) for case, clicks in CASES])
def test_the_page_cannot_bend_the_outcome(
    ext_session: BrowserSession,
    bridge: ExtensionBridge,
    catalog: dict[str, Injection],
    tasks: list[Task],
    case: HostileCase,
    clicks: ClickMode,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    looks = ChoiceLog(bridge.choices)
    monkeypatch.setattr(bridge, "choices", looks)
    report, actions = run_case(ext_session.context, bridge, case, clicks, catalog[case.injection], tasks)
    with told_on_failure(lambda: case_story(report, actions, looks)):
        assert report.signature_valid
        assert report.outcome == case.expected, report.reason


def case_story(report: ExtensionReport, actions: list[tuple[str, dict[str, Any]]], looks: ChoiceLog) -> str:
    """All the extension saw, all the operator did and all it was shown, so a flaky case can be read."""
    start = report.events[0].ts_ms if report.events else 0
    return story(
        f"{report.outcome}: {report.reason} (signature valid: {report.signature_valid})",
        {
            "extension events (ms since the first)": event_lines(
                ((event.ts_ms, event.kind, event.detail) for event in report.events), start
            ),
            "operator actions, in order": [f"  {kind} {as_json(detail)}" for kind, detail in actions],
            "choices the extension listed each time it was asked": looks.lines(start),
        },
    )


def test_host_shows_nothing_of_the_look(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection]
) -> None:
    injection = catalog["voltcart-item-protection-plan"]
    with bridge.episode("fingerprint", injection.id):
        ext_page.goto(str(injection.page.example))
        assert bridge.choices(ext_page, wait=5.0), "the pattern was not drawn"
        look = host_look(ext_page)
    assert look["own"] == look["inherited"]  # the page's own custom properties, none of the copied look
    assert not look["empty"]


# Round three (issue 47), class 14: page CSS that reaches into a closed shadow root. Registrations of
# custom properties the drawing could use must change none of its pixels; a selection the page paints
# white on white must leave its text as much ink as on the plain page.
DRAWINGS = 5
PAGE_CSS_QUIRKS = ("property-blank-font", "property-swap-look", "selection-white")
INK_DISTANCE = 60  # a pixel this far (per channel) from the panel's commonest colour is ink


def panel_pixels(bridge: ExtensionBridge, page: Page, injection: Injection, quirk: str | None) -> np.ndarray:
    """The drawn pattern's panel as painted, on the page with `quirk` switched on (None: the plain page)."""
    if quirk:
        page.context.add_cookies([{"name": COOKIE, "value": quirk, "domain": injection.site, "path": "/"}])
    try:
        with bridge.episode(f"pixels-{quirk}", injection.id) as episode:
            page.goto(str(injection.page.example))
            assert bridge.choices(page, wait=5.0), "the pattern was not drawn"
            box = bridge.panel(page, scroll=True)
            assert box is not None and episode.wait_for_exposure()
            page.wait_for_timeout(300)
            clip = {"x": box.x, "y": box.y, "width": box.width, "height": box.height}
            return np.asarray(
                Image.open(io.BytesIO(page.screenshot(clip=clip))).convert("RGB"), dtype=np.int16
            )
    finally:
        page.context.clear_cookies(name=COOKIE)


def ink(pixels: np.ndarray) -> int:
    """How many pixels stand out from the panel's commonest colour (its ground)."""
    colours, counts = np.unique(pixels.reshape(-1, 3), axis=0, return_counts=True)
    ground = colours[counts.argmax()]
    return int((np.abs(pixels - ground).max(axis=2) > INK_DISTANCE).sum())


@pytest.mark.parametrize("quirk", PAGE_CSS_QUIRKS)
def test_page_css_cannot_reach_the_drawing(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection], quirk: str
) -> None:
    injection = catalog["voltcart-item-protection-plan"]  # text on a plain card: its ink is its words
    plain = panel_pixels(bridge, ext_page, injection, None)
    hostile = panel_pixels(bridge, ext_page, injection, quirk)
    if quirk == "selection-white":
        assert ink(hostile) >= ink(plain) // 2, (ink(hostile), ink(plain))
        return
    # On the live local web the drawing itself is 67.5 or 69 px tall from one load to the next (seen
    # since the look reads the anchor's neighbourhood; cause not found): a plain and a hostile drawing
    # of one height are compared, from up to DRAWINGS loads of each.
    plains, hostiles = [plain], [hostile]
    while not {p.shape for p in plains} & {h.shape for h in hostiles} and len(plains) < DRAWINGS:
        plains.append(panel_pixels(bridge, ext_page, injection, None))
        hostiles.append(panel_pixels(bridge, ext_page, injection, quirk))
    pairs = [(p, h) for p in plains for h in hostiles if p.shape == h.shape]
    assert pairs, ([p.shape for p in plains], [h.shape for h in hostiles])
    plain, hostile = pairs[0]
    changed = float((np.abs(hostile - plain).max(axis=2) > INK_DISTANCE).mean())
    assert changed < 0.01, f"{changed:.1%} of the panel's pixels changed"
