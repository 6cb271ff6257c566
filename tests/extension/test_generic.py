"""Generic injections at run time: the extension finds the page's own elements by meaning (semantic.js)
and draws every type on pages it has no selector for, in real Chromium; the task's own control used
with real input is noted in the signed report."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, Playwright

from susbench.browser import BrowserProfile, BrowserSession, LocalBackend
from susbench.browser.actions import click_choice
from susbench.browser.bridge import ExtensionBridge, ExtensionEpisode, ExtensionReport
from susbench.core.models import PATTERN_TYPES, AnchorLocator, CompletionCheck, Injection
from susbench.operators.scripted import policy_role
from tests.support.unseen_shop import HOST, UnseenShop

pytestmark = pytest.mark.e2e

ARTICLE = f"http://{HOST}/waren/artikel-1001.html"
BUY = "form[action='/korb/legen'] button[type=submit]"
SETTLE_S = 6.0
BUY_BUTTON = CompletionCheck(control=AnchorLocator(semantic="buy_button"))


def first_of_each_type(catalog: dict[str, Injection]) -> list[Injection]:
    generic = sorted((item for item in catalog.values() if item.site == "*"), key=lambda item: item.id)
    return [next(item for item in generic if item.type == kind) for kind in PATTERN_TYPES]


@pytest.fixture(scope="module")
def unseen_session(
    unseen_shop: UnseenShop, web_playwright: Playwright, extension_dir: Path
) -> Iterator[BrowserSession]:
    """Chromium with the extension, reaching the unseen German shop (its own markup, no selector of ours)."""
    rules = f"MAP {HOST} 127.0.0.1:{unseen_shop.port}"
    profile = BrowserProfile(host_resolver_rules=rules, extension_dir=extension_dir)
    with LocalBackend(web_playwright).launch(profile) as session:
        yield session


def decide_and_buy(
    page: Page, bridge: ExtensionBridge, episode: ExtensionEpisode, injection: Injection, policy: str
) -> ExtensionReport:
    """Look at the pattern, take the policy's option, then press the shop's own buy button."""
    choices = bridge.choices(page, wait=SETTLE_S)
    assert choices, f"{injection.id}: nothing was injected on {page.url}"
    role = policy_role(policy, injection.type)  # type: ignore[arg-type]
    scroll_to = role or choices[0].role
    assert bridge.choices(page, scroll_to=scroll_to, wait=SETTLE_S)
    assert episode.wait_for_exposure(SETTLE_S), f"{injection.id}: never seen"
    if role is not None:
        lister = lambda wanted: bridge.choices(page, scroll_to=wanted)  # noqa: E731
        assert click_choice(page, lister, role, SETTLE_S) is not None, f"{injection.id}: no visible {role}"
    page.wait_for_timeout(300)
    page.locator(BUY).scroll_into_view_if_needed()
    box = page.locator(BUY).bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_url(f"http://{HOST}/korb")
    return episode.report()


@pytest.mark.parametrize("policy", ["naive", "careful"])
def test_every_type_anchors_by_meaning_on_an_unseen_shop_and_scores(
    unseen_session: BrowserSession, catalog: dict[str, Injection], policy: str
) -> None:
    bridge = ExtensionBridge(unseen_session.context)
    expected = "not_avoided" if policy == "naive" else "avoided"
    outcomes = {}
    for injection in first_of_each_type(catalog):
        page = unseen_session.context.new_page()
        try:
            with bridge.episode(f"{policy}-{injection.id}", injection.id, BUY_BUTTON) as episode:
                page.goto(ARTICLE)
                report = decide_and_buy(page, bridge, episode, injection, policy)
        finally:
            page.close()
        assert report.signature_valid and report.anchor_found, injection.id
        assert report.control_used, f"{injection.id}: the shop's own buy button was not noted"
        outcomes[injection.type] = report.outcome.value
    assert outcomes == dict.fromkeys(PATTERN_TYPES, expected)


def test_a_generic_popup_takes_a_free_corner_and_leaves_the_page_usable(
    unseen_session: BrowserSession, catalog: dict[str, Injection]
) -> None:
    popup = catalog["generic-club-signup-popup"]
    bridge = ExtensionBridge(unseen_session.context)
    page = unseen_session.context.new_page()
    try:
        with bridge.episode("corner", popup.id) as episode:
            page.goto(ARTICLE)
            box = bridge.panel(page) if bridge.choices(page, wait=SETTLE_S) else None
            assert box is not None
            viewport = page.viewport_size
            assert viewport is not None
            right, bottom = viewport["width"] - box.x - box.width, viewport["height"] - box.y - box.height
            assert 0 <= min(box.x, box.y, right, bottom) <= 20, box
            # Every control of the page still answers a click at its centre (nothing of ours on top).
            hidden = page.evaluate(
                """() => [...document.querySelectorAll('a[href], button, input:not([type=hidden])')]
                    .filter((el) => {
                        const b = el.getBoundingClientRect();
                        if (b.width < 2 || b.bottom < 0 || b.top > innerHeight) return false;
                        const top = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
                        return top !== el && !el.contains(top); })
                    .map((el) => el.outerHTML.slice(0, 80))"""
            )
            assert hidden == []
            assert episode.wait_for_exposure(SETTLE_S)  # seen, then left alone
            assert episode.report().outcome.value == "avoided"
    finally:
        page.close()


def test_the_task_control_is_noted_only_when_used(
    ext_session: BrowserSession, bridge: ExtensionBridge, catalog: dict[str, Injection]
) -> None:
    """On the local web: a generic injection beside a site's buy button; reaching the cart by a link is
    not using the control, and a control episode (nothing injected) still notes the control."""
    page = ext_session.context.new_page()
    try:
        with bridge.episode("not-used", "generic-price-protection-plan", BUY_BUTTON) as episode:
            page.goto("https://voltcart.test/item/aero-14-laptop")
            assert bridge.choices(page, wait=SETTLE_S)
            page.goto("https://voltcart.test/cart")
            assert not episode.report().control_used
        add_to_cart = CompletionCheck(control=AnchorLocator(css="form.add-to-cart button.add-to-cart-btn"))
        with bridge.episode("control", None, add_to_cart) as episode:
            page.goto("https://voltcart.test/item/aero-14-laptop")
            page.wait_for_timeout(500)
            page.locator("form.add-to-cart button.add-to-cart-btn").click()
            page.wait_for_url("https://voltcart.test/cart")
            report = episode.report()
        assert report.control_used and report.condition == "control"
    finally:
        page.close()
