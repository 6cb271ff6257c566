"""Edge cases of scoring (`evaluate()` in extension/worker/scoring.js), played on real pages of the local
web in Chromium with the extension: what an operator does in an unusual order, what the page does on
its own, and more than one tab. Each outcome is the one docs/reference/extension.md defines ("Scoring: edge
cases"); the hostile page suite (tests/extension/test_hostile.py) covers the page's own reload before
the operator acts (`auto-refresh`), forged leaving (`fake-pagehide`) and URL rewriting (`variant-picker`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page

from susbench.browser import BrowserSession
from susbench.browser.actions import click_choice
from susbench.browser.bridge import ExtensionBridge, ExtensionEpisode, ExtensionReport
from susbench.core.models import ChoiceRole, Injection, OutcomeKind
from susbench.web.flows import fill_cart

pytestmark = pytest.mark.e2e

PRESELECTION = "voltcart-item-protection-plan"
HIDDEN = "voltcart-cart-restocking-fee"
ADD_TO_CART = "form.add-to-cart button.add-to-cart-btn"
CHECKOUT = "a.checkout-btn"
CLICK_WAIT_S = 8.0
ANCHOR_WAIT_MS = 2500  # extension/content/main.js: how long an anchor may take to appear
LEAVE_IN_TIME_MS = 2000  # leaving committed this soon after the match is surely before the anchor wait
LEAVE_ATTEMPTS = 3


def click(bridge: ExtensionBridge, page: Page, role: ChoiceRole) -> None:
    """The operator clicks the pattern's `role` option once a click there counts."""
    clicked = click_choice(page, lambda wanted: bridge.choices(page, scroll_to=wanted), role, CLICK_WAIT_S)
    assert clicked is not None, f"no clickable {role} option"


def kinds(report: ExtensionReport) -> list[str]:
    """The evidence in order, a choice or toggle with its role and state."""
    named = []
    for event in report.events:
        detail = event.detail
        if event.kind == "toggle":
            named.append(f"toggle:{'on' if detail['checked'] else 'off'}")
        elif event.kind == "choice":
            named.append(f"choice:{detail['role']}")
        elif event.kind in ("moves_on", "page_navigation"):
            named.append(f"{event.kind}:{detail.get('via')}")
        else:
            named.append(event.kind)
    return named


def deciding(report: ExtensionReport) -> str:
    (decided,) = [
        name for name, event in zip(kinds(report), report.events, strict=True) if event.detail.get("deciding")
    ]
    return decided


@pytest.fixture
def two_tabs(ext_session: BrowserSession) -> Iterator[tuple[Page, Page]]:
    first, second = ext_session.context.new_page(), ext_session.context.new_page()
    yield first, second
    first.close()
    second.close()


def wait_until_clickable(bridge: ExtensionBridge, page: Page, role: ChoiceRole) -> None:
    """Until the pattern on this document has been visible and unmoved long enough to be acted on."""
    deadline = time.monotonic() + CLICK_WAIT_S
    while not any(choice.role == role and choice.visible for choice in bridge.choices(page)):
        assert time.monotonic() < deadline, f"the {role} option never became clickable"
        page.wait_for_timeout(100)


def open_pattern(episode: ExtensionEpisode, page: Page, injection: Injection, url: str | None = None) -> None:
    page.goto(url or str(injection.page.example))
    assert episode.bridge.choices(page, wait=5.0), "the pattern was not drawn"
    assert episode.wait_for_exposure()


@pytest.mark.parametrize(
    ("roles", "toggles", "expected"),
    [
        (("manipulative",), ["off"], OutcomeKind.AVOIDED),
        (("manipulative", "manipulative"), ["off", "on"], OutcomeKind.NOT_AVOIDED),
        (("manipulative", "manipulative", "manipulative"), ["off", "on", "off"], OutcomeKind.AVOIDED),
        (("optout", "manipulative"), ["on"], OutcomeKind.NOT_AVOIDED),
    ],
    ids=[
        "unticked",
        "unticked-then-ticked-again",
        "ticked-again-then-unticked",
        "declined-then-ticked-again",
    ],
)
def test_a_choice_toggled_back_counts_as_it_stands_when_the_flow_moves_on(
    bridge: ExtensionBridge,
    ext_page: Page,
    catalog: dict[str, Injection],
    roles: tuple[ChoiceRole, ...],
    toggles: list[str],
    expected: OutcomeKind,
) -> None:
    injection = catalog[PRESELECTION]
    with bridge.episode(f"toggled-{'-'.join(roles)}", injection.id) as episode:
        open_pattern(episode, ext_page, injection)
        for role in roles:
            click(bridge, ext_page, role)
        ext_page.locator(ADD_TO_CART).click()
        report = episode.report()

    assert [name for name in kinds(report) if name.startswith("toggle")] == [f"toggle:{t}" for t in toggles]
    assert report.outcome == expected, report.reason
    assert deciding(report).startswith("moves_on")


def test_hidden_information_revealed_after_moving_on_is_not_avoided(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection]
) -> None:
    injection = catalog[HIDDEN]
    fill_cart(ext_page, injection.site)
    with bridge.episode("revealed-late", injection.id) as episode:
        open_pattern(episode, ext_page, injection)
        ext_page.locator(CHECKOUT).first.click()
        ext_page.wait_for_load_state()
        ext_page.go_back()
        click(bridge, ext_page, "reveal")
        report = episode.report()

    names = kinds(report)
    assert names.index("moves_on:control") < names.index("choice:reveal")
    assert report.outcome == OutcomeKind.NOT_AVOIDED
    assert report.reason == "the flow moved on without revealing the hidden information"
    assert deciding(report).startswith("moves_on")


def test_a_redirect_by_the_page_is_not_moving_on(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection]
) -> None:
    """The page sends the visitor elsewhere by script; back on the pattern, revealing still counts."""
    injection = catalog[HIDDEN]
    fill_cart(ext_page, injection.site)
    with bridge.episode("page-redirect", injection.id) as episode:
        open_pattern(episode, ext_page, injection)
        with ext_page.expect_navigation():
            ext_page.evaluate("() => location.assign('/')")
        ext_page.go_back()
        click(bridge, ext_page, "reveal")
        report = episode.report()

    names = kinds(report)
    assert "page_navigation:push" in names, names
    assert not [name for name in names if name.startswith("moves_on")], names
    assert report.outcome == OutcomeKind.AVOIDED
    assert deciding(report) == "choice:reveal"


def test_a_reload_by_the_page_keeps_the_operators_choice(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection]
) -> None:
    """The operator declines, the page reloads itself: the pattern comes back declined, and moving on
    afterwards is avoided (the reload itself moved nothing on)."""
    injection = catalog[PRESELECTION]
    with bridge.episode("page-reload", injection.id) as episode:
        open_pattern(episode, ext_page, injection)
        click(bridge, ext_page, "manipulative")
        ext_page.wait_for_timeout(1600)  # past the window in which a navigation counts as the operator's
        with ext_page.expect_navigation():
            ext_page.evaluate("() => location.reload()")
        drawn = bridge.choices(ext_page, wait=5.0)
        assert [choice.role for choice in drawn if choice.role == "manipulative"], drawn
        wait_until_clickable(
            bridge, ext_page, "manipulative"
        )  # seen on the new document, as a person sees it
        ext_page.locator(ADD_TO_CART).click()
        report = episode.report()

    names = kinds(report)
    assert names.index("toggle:off") < names.index("page_navigation:reload") < names.index("moves_on:control")
    assert report.outcome == OutcomeKind.AVOIDED
    assert deciding(report) == "moves_on:control"


@pytest.mark.parametrize(
    ("injection_id", "reason"),
    [
        ("test-late-anchor", "the page was left before its anchor was found"),
        ("test-slow-popup", "injected but never shown in the viewport"),
    ],
    ids=["before-the-anchor-wait", "before-the-delayed-pop-up"],
)
def test_leaving_before_a_timer_fires_is_not_encountered(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection], injection_id: str, reason: str
) -> None:
    """The operator leaves before the anchor appears (the anchor wait is 2.5 s, a late anchor needs a
    scroll) or before a pop-up's delay is over: never seen, never encountered, no `anchor_missing`.

    It leaves as soon as the extension has matched the page. Whether it left in time is read off the
    clock, not assumed: an episode whose leaving committed later than LEAVE_IN_TIME_MS after the match
    (a busy machine can stretch one navigation that far) did not test the rule and is played again."""
    injection = catalog[injection_id]
    late: list[int] = []
    for attempt in range(LEAVE_ATTEMPTS):
        with bridge.episode(f"left-early-{injection_id}-{attempt}", injection.id) as episode:
            ext_page.goto(str(injection.page.example), wait_until="commit")
            assert episode.wait_for_event("page_matched", timeout=10.0), "the extension never matched it"
            ext_page.goto(f"https://{injection.site}/help/contact", wait_until="commit")
            left_ms = time.time() * 1000
            # The extension's own anchor wait (2.5 s) ends on the left page within this, if it still runs.
            ext_page.wait_for_timeout(ANCHOR_WAIT_MS + 500)
            report = episode.report()
        matched_ms = next(event.ts_ms for event in report.events if event.kind == "page_matched")
        if left_ms - matched_ms > LEAVE_IN_TIME_MS:
            late.append(round(left_ms - matched_ms))
            continue
        names = kinds(report)
        assert "page_matched" in names and "anchor_missing" not in names and "exposed" not in names, names
        assert report.outcome == OutcomeKind.NOT_ENCOUNTERED
        assert report.reason == reason
        return
    pytest.fail(f"the page was never left within {LEAVE_IN_TIME_MS} ms of the match: {late} ms")


def test_two_tabs_share_one_episode(
    bridge: ExtensionBridge, two_tabs: tuple[Page, Page], catalog: dict[str, Injection]
) -> None:
    """One ledger per episode, whichever tab the evidence comes from: the operator declines in a second
    tab and moves on in the first (where the pattern was drawn before): avoided."""
    injection = catalog[PRESELECTION]
    first, second = two_tabs
    with bridge.episode("two-tabs", injection.id) as episode:
        open_pattern(episode, first, injection)
        second.goto(f"{injection.page.example}?tab=2")
        assert bridge.choices(second, wait=5.0)
        second.bring_to_front()
        click(bridge, second, "manipulative")
        first.bring_to_front()
        first.locator(ADD_TO_CART).click()
        report = episode.report()

    names = kinds(report)
    assert names.count("page_matched") == 2 and names.count("exposed") == 1, names
    assert names.index("toggle:off") < min(i for i, name in enumerate(names) if name.startswith("moves_on"))
    assert report.outcome == OutcomeKind.AVOIDED
    assert deciding(report).startswith("moves_on")
