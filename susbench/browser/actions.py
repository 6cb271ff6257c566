"""Acting in a page as a person does: one step executor and one scroll-into-view-and-click helper.

Every action is real Playwright input (trusted events), because the extension only counts trusted
input as evidence. The recorder walks capture plans and the scripted operators walk reference
paths with the same `perform_step`, so a step means the same thing when recorded and when replayed.
Clicks come two ways (`ClickMode`): by `coordinates`, the mouse pressed at a point of the screen (as
people and computer-use agents click), or by `locator`, Playwright's element click, which scrolls the
element into view, waits for it to stand still and checks that the click would land on it (as
DOM-driven agents click).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Literal

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import JSHandle, Locator, Page

from susbench.browser.bridge import Choice
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
        height = int(page.evaluate("document.documentElement.scrollHeight"))
        if position >= height:
            break
        position += SCROLL_STEP_PX
        page.evaluate(f"window.scrollTo(0, {position})")
        page.wait_for_timeout(SCROLL_PAUSE_MS)


class _ClickStayed(Exception):
    """The click started no navigation of the page."""


# Watches, from before a click, whether the page starts a navigation (the Navigation API's `navigate`
# event, fired while the click is handled or, for a form, in a task it schedules), without adding
# anything the page's scripts can see. NAVIGATED answers after the tasks the click queued have run.
WATCH_NAVIGATE = """() => {
  const seen = { navigating: false };
  navigation.addEventListener("navigate", () => { seen.navigating = true; }, { once: true });
  return seen;
}"""
NAVIGATED = "(seen) => new Promise((answer) => setTimeout(() => answer(seen.navigating), 100))"


# Whether the element's centre shows the element itself (not a sticky header or a banner over it).
ON_TOP = """(el) => {
  const box = el.getBoundingClientRect();
  const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
  return Boolean(hit) && (hit === el || el.contains(hit));
}"""


def _click_at_centre(page: Page, target: Locator, timeout_ms: float) -> None:
    """The mouse at the element's centre, once it can be seen there (scrolled to the middle of the screen
    when something covers it); like Playwright's own click, wait for the page the click opens."""
    target.scroll_into_view_if_needed(timeout=timeout_ms)
    if not target.evaluate(ON_TOP):
        target.evaluate("(el) => el.scrollIntoView({ block: 'center', inline: 'nearest' })")
    box = target.bounding_box(timeout=timeout_ms)
    if box is None:
        raise StepFailed("the element to click is not visible")
    seen = page.evaluate_handle(WATCH_NAVIGATE)
    try:
        with page.expect_navigation(wait_until="load", timeout=timeout_ms):
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            if not _navigating(seen):
                raise _ClickStayed
    except _ClickStayed:
        return


def _navigating(seen: JSHandle) -> bool:
    try:
        return bool(seen.evaluate(NAVIGATED))
    except PlaywrightError:
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


def _click_element_at(page: Page, x: float, y: float, timeout_ms: float) -> None:
    """Playwright's element click on whatever element the page shows at (x, y), at that point."""
    try:
        element = page.evaluate_handle("([x, y]) => document.elementFromPoint(x, y)", [x, y]).as_element()
        box = element.bounding_box() if element is not None else None
        if element is None or box is None:
            raise StepFailed(f"no element at ({x:.0f}, {y:.0f})")
        element.click(position={"x": x - box["x"], "y": y - box["y"]}, timeout=timeout_ms)
    except PlaywrightError as exc:
        raise StepFailed(str(exc).splitlines()[0]) from None


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
            else:
                _click_element_at(page, *match.center, 1000 * max(deadline - time.monotonic(), 1.0))
            return match
        if time.monotonic() >= deadline:
            return None
        page.wait_for_timeout(POLL_MS)
