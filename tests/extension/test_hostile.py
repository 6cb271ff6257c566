"""Outcomes the page cannot bend (issue 16): every case of tests/data/hostile_cases.yaml, a hostile or
quirky page behaviour of the local web met by a real scripted operator clicking by coordinates or by
locator, scores what the rules define; and the pattern leaves no copied look on its host.

`pytest tests/extension/test_hostile.py --extension-at 337f432` runs the same pages against the
extension as it was when the attacks were found.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from playwright.sync_api import Page

from susbench.browser import BrowserSession
from susbench.browser.actions import ClickMode
from susbench.browser.bridge import ExtensionBridge, ExtensionReport
from susbench.core.models import Injection, Task
from tests.support.drawing import panel_pixels
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
PAGE_CSS_QUIRKS = ("property-blank-font", "property-swap-look", "selection-white")
INK_DISTANCE = 60  # a pixel this far (per channel) from the panel's commonest colour is ink


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
    assert hostile.shape == plain.shape, (hostile.shape, plain.shape)
    changed = float((np.abs(hostile - plain).max(axis=2) > INK_DISTANCE).mean())
    assert changed < 0.01, f"{changed:.1%} of the panel's pixels changed"
