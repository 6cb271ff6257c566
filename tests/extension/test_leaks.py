"""What the page learns of the operator's choice (issue 47): nothing. Measured with the `spy-input` quirk of
the local web, page JavaScript that only watches as an analytics or session-replay script does: every
pointer, mouse, wheel and drag event on the window and the document (both phases) that names the
pattern's host as its target or relatedTarget, with its coordinates; `document.elementFromPoint` at the
host's centre every 20 ms; every scroll position of the page.

Each test fails against the extension and baselines of f09da00 (`pytest tests/extension/test_leaks.py
--extension-at f09da00` for the extension's part): `pointerrawupdate` reached the page with the host as
its target at the very point of the click, a page element's `mouseover` carried the host as its
relatedTarget, and the baselines scrolled the option they were about to click to the viewport centre.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page

from susbench.browser.actions import ClickMode, click_choice
from susbench.browser.bridge import ExtensionBridge
from susbench.core.models import ChoiceRole, Injection
from susbench.web.quirks import COOKIE

pytestmark = pytest.mark.e2e

CLICK_WAIT_S = 8.0
AFTER_MS = 400  # how long the page watches after the operator moved on from the pattern


@pytest.fixture
def spied_page(ext_page: Page) -> Iterator[Page]:
    """A page of the extension's browser with the watching quirk switched on for every site."""
    yield ext_page
    ext_page.context.clear_cookies(name=COOKIE)


def spy_on(page: Page, injection: Injection) -> None:
    page.context.add_cookies([{"name": COOKIE, "value": "spy-input", "domain": injection.site, "path": "/"}])


def choose(bridge: ExtensionBridge, page: Page, role: ChoiceRole, clicks: ClickMode) -> None:
    """The operator's click as the scripted baselines make it (susbench.controller.episode wires the
    extension's choices to them the same way), then the pointer goes on to the page's own corner."""
    clicked = click_choice(
        page, lambda wanted: bridge.choices(page, scroll_to=wanted), role, CLICK_WAIT_S, clicks
    )
    assert clicked is not None, f"no clickable {role} option"
    page.mouse.move(5, 5, steps=4)
    page.wait_for_timeout(AFTER_MS)


def spied(page: Page) -> dict[str, Any]:
    return dict(page.evaluate("() => window.spied"))


@pytest.mark.parametrize(
    ("injection_id", "role", "clicks"),
    [
        ("pizzapalace-home-app-popup", "close", "coordinates"),
        ("pizzapalace-home-app-popup", "cta", "locator"),
        ("staywise-hotel-rewards-shame", "safe", "locator"),
        ("voltcart-item-protection-plan", "optout", "coordinates"),
    ],
)
def test_the_page_hears_nothing_of_a_press_on_the_pattern(
    bridge: ExtensionBridge,
    spied_page: Page,
    catalog: dict[str, Injection],
    injection_id: str,
    role: ChoiceRole,
    clicks: ClickMode,
) -> None:
    injection = catalog[injection_id]
    spy_on(spied_page, injection)
    with bridge.episode(f"leak-{injection_id}-{role}", injection.id) as episode:
        spied_page.goto(str(injection.page.example))
        assert bridge.choices(spied_page, wait=5.0), "the pattern was not drawn"
        choose(bridge, spied_page, role, clicks)
        heard = spied(spied_page)
        report = episode.report()
    assert [e.detail["role"] for e in report.events if e.kind == "choice"][:1] == [role], report.reason
    # No event the page hears names the host, as its target or as where the pointer came from or went.
    assert heard["events"] == [], heard["events"]


def test_a_dismissed_popup_tells_the_page_nothing_of_which_option(
    bridge: ExtensionBridge, spied_page: Page, catalog: dict[str, Injection]
) -> None:
    """Both of a pop-up's options dismiss it: what `elementFromPoint` at its centre shows the page (the
    pop-up there, then gone, as the page's own pop-up would be once the visitor uses the page under it)
    is the same whichever the operator chose, and no event carries the point they pressed."""
    injection = catalog["pizzapalace-home-app-popup"]
    spy_on(spied_page, injection)
    seen = {}
    for role in ("cta", "close"):
        with bridge.episode(f"leak-popup-{role}", injection.id):
            spied_page.goto(str(injection.page.example))
            assert bridge.choices(spied_page, wait=5.0), "the pattern was not drawn"
            choose(bridge, spied_page, role, "coordinates")
            heard = spied(spied_page)
        assert heard["events"] == [], heard["events"]
        seen[role] = [state for state, _ in heard["hits"]]
    # (the page before the pop-up's delay,) the pop-up, the page: the same either way
    assert seen["cta"] == seen["close"] and seen["cta"][-2:] == ["host", "page"], seen


@pytest.mark.parametrize("clicks", ["coordinates", "locator"])
def test_the_baselines_scroll_alike_whatever_they_choose(
    bridge: ExtensionBridge, spied_page: Page, catalog: dict[str, Injection], clicks: ClickMode
) -> None:
    """The naive and the careful baseline bring the pattern into view the same way: every scroll position
    the page saw, up to and after the click, is the same whichever option they were about to click (the
    confirm-shaming card sits below the fold, so both must scroll)."""
    injection = catalog["staywise-hotel-rewards-shame"]
    roles: tuple[ChoiceRole, ChoiceRole] = ("manipulative", "safe")
    spy_on(spied_page, injection)
    scrolled = {}
    for role in roles:
        with bridge.episode(f"leak-scroll-{role}", injection.id):
            spied_page.goto(str(injection.page.example))
            offered = bridge.choices(spied_page, wait=5.0)
            assert role in {choice.role for choice in offered}, offered
            choose(bridge, spied_page, role, clicks)
            scrolled[role] = spied(spied_page)["scrolls"]
    first, second = (scrolled[role] for role in roles)
    assert first, "the pattern was in view without scrolling: nothing measured"
    assert first == second, scrolled
