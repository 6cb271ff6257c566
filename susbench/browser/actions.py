"""Acting in a page as a person does: one step executor and one scroll-into-view-and-click helper.

Every action is real Playwright input (trusted events), because the extension only counts trusted
input as evidence. The recorder walks capture plans and the scripted operators walk reference
paths with the same `perform_step`, so a step means the same thing when recorded and when replayed.
Clicks come two ways (`ClickMode`): by `coordinates`, the mouse pressed at a point of the screen (as
people and computer-use agents click), or by `locator`, an element click, which scrolls the element
into view, waits for it to stand still and checks that the click would land on it (as DOM-driven
agents click). Nothing here runs in or reads from the page's main world, which page script controls:
Playwright's checks run in its own isolated world, and the rest in one of ours or as the browser's
own hit test (`susbench.browser.isolated`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Literal

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator, Page

from susbench.browser.bridge import Choice
from susbench.browser.isolated import (
    IsolatedWorldError,
    World,
    contains,
    evaluate,
    node_at,
    node_box,
    scroll_into_view,
)
from susbench.core.models import ChoiceRole, Step

SCROLL_STEP_PX = 600
SCROLL_PAUSE_MS = 120
POLL_MS = 100

ChoiceLister = Callable[[ChoiceRole | None], Sequence[Choice]]
"""The injected pattern's choices now, after scrolling the given role's option into view."""

ClickMode = Literal["coordinates", "locator"]


class StepFailed(Exception):
    """A step could not be carried out (element missing, navigation failed); the message says why."""


def step_target(page: Page, step: Step) -> Locator:
    """The element a step acts on: CSS selector, filtered by text, or the first element with the text."""
    if step.selector and step.text:
        return page.locator(step.selector).filter(has_text=step.text).first
    if step.selector:
        return page.locator(step.selector).first
    return page.get_by_text(step.text or "", exact=False).first


def scroll_to_bottom(page: Page) -> None:
    """Scroll down in steps, as a reader does, so lazily loaded parts (IntersectionObserver,
    loading=lazy) are fetched."""
    position = 0
    for _ in range(200):
        height = int(evaluate(page, "() => document.documentElement.scrollHeight"))
        if position >= height:
            break
        position += SCROLL_STEP_PX
        evaluate(page, "(y) => window.scrollTo(0, y)", position)
        page.wait_for_timeout(SCROLL_PAUSE_MS)


class _ClickStayed(Exception):
    """The click started no navigation of the page."""


# Watches, from before a click, whether the page starts a navigation (the Navigation API's `navigate`
# event, fired while the click is handled or, for a form, in a task it schedules), from the operator's
# own world, where the page neither sees the listener nor can replace `navigation`. NAVIGATED answers
# after the tasks the click queued have run.
WATCH_NAVIGATE = """() => {
  globalThis.navigating = false;
  navigation.addEventListener("navigate", () => { globalThis.navigating = true; }, { once: true });
}"""
NAVIGATED = "() => new Promise((answer) => setTimeout(() => answer(globalThis.navigating), 100))"


def _click_at_centre(page: Page, target: Locator, timeout_ms: float) -> None:
    """The mouse at the element's centre, once Playwright's own checks pass (scrolled into view, visible,
    still, nothing of the page over its centre); like Playwright's own click, wait for the page the click
    opens."""
    target.click(trial=True, timeout=timeout_ms)
    box = target.bounding_box(timeout=timeout_ms)
    if box is None:
        raise StepFailed("the element to click is not visible")
    world = World(page)
    world.evaluate(WATCH_NAVIGATE)
    try:
        with page.expect_navigation(wait_until="load", timeout=timeout_ms):
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            if not _navigating(world):
                raise _ClickStayed
    except _ClickStayed:
        return


def _navigating(world: World) -> bool:
    try:
        return bool(world.evaluate(NAVIGATED))
    except (PlaywrightError, IsolatedWorldError):
        return True  # the document is already gone: the click navigated


def perform_step(page: Page, step: Step, timeout_ms: float, clicks: ClickMode = "locator") -> None:
    """Carry out one step; `decide` and `wait` only wait (the decision is the operator's own)."""
    try:
        match step.action:
            case "goto":
                page.goto(step.url or "", timeout=timeout_ms, wait_until="load")
            case "click" if clicks == "coordinates":
                _click_at_centre(page, step_target(page, step), timeout_ms)
            case "click":
                step_target(page, step).click(timeout=timeout_ms)
            case "fill":
                step_target(page, step).fill(step.value or "", timeout=timeout_ms)
            case "select":
                step_target(page, step).select_option(step.value, timeout=timeout_ms)
            case "check":
                step_target(page, step).check(timeout=timeout_ms)
            case "uncheck":
                step_target(page, step).uncheck(timeout=timeout_ms)
            case "press":
                page.keyboard.press(step.value or "")
            case "scroll" if step.value:
                page.mouse.wheel(0, int(step.value))
            case "scroll":
                scroll_to_bottom(page)
        if step.action in ("click", "press", "goto"):
            page.wait_for_load_state("load", timeout=timeout_ms)
        if step.wait_ms:
            page.wait_for_timeout(step.wait_ms)
    except PlaywrightError as exc:
        raise StepFailed(str(exc).splitlines()[0]) from None


def _click_element_at(page: Page, x: float, y: float, timeout_ms: float) -> bool:
    """An element click on whatever the browser shows at (x, y), at that point: the element found by the
    browser's hit test, scrolled into view, clicked once it stands still and the point still lands on it.

    False when the element left the document before it could be clicked (the page reloaded or redrew
    it): the caller looks for it again, as a person whose target vanished would."""
    deadline = time.monotonic() + timeout_ms / 1000
    node = node_at(page, x, y)
    box = node_box(page, node) if node is not None else None
    if node is None or box is None:
        raise StepFailed(f"no element at ({x:.0f}, {y:.0f})")
    offset = (x - box["x"], y - box["y"])
    scroll_into_view(page, node)
    world = World(page)
    while True:
        before = node_box(page, node)
        page.wait_for_timeout(POLL_MS)
        box = node_box(page, node)
        if before is None or box is None:
            return False
        if box == before:
            point = (box["x"] + offset[0], box["y"] + offset[1])
            hit = node_at(page, *point)
            if hit is not None and contains(world, node, hit):
                page.mouse.click(*point)
                return True
        if time.monotonic() >= deadline:
            raise StepFailed(f"the element at ({x:.0f}, {y:.0f}) did not stand still under the pointer")


def click_choice(
    page: Page, choices: ChoiceLister, role: ChoiceRole, wait_s: float, clicks: ClickMode = "coordinates"
) -> Choice | None:
    """Scroll the pattern's `role` option into view and click its centre, once it is visible.

    None when no visible option of that role showed up within `wait_s`; raises StepFailed when a
    `locator` click could not be carried out.
    """
    deadline = time.monotonic() + wait_s
    while True:
        match = next((choice for choice in choices(role) if choice.role == role), None)
        if match is not None and match.visible:
            if clicks == "coordinates":
                page.mouse.click(*match.center)
                return match
            try:
                if _click_element_at(page, *match.center, 1000 * max(deadline - time.monotonic(), 1.0)):
                    return match
            except PlaywrightError as exc:
                raise StepFailed(str(exc).splitlines()[0]) from None
        if time.monotonic() >= deadline:
            return None
        page.wait_for_timeout(POLL_MS)
