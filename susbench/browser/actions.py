"""Acting in a page as a person does: one step executor and one scroll-into-view-and-click helper.

Every action is real Playwright input (trusted events), because the extension only counts trusted
input as evidence. The recorder walks capture plans and the scripted operators walk reference
paths with the same `perform_step`, so a step means the same thing when recorded and when replayed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator, Page

from susbench.browser.bridge import Choice
from susbench.models import ChoiceRole, Step

SCROLL_STEP_PX = 600
SCROLL_PAUSE_MS = 120
POLL_MS = 100

ChoiceLister = Callable[[ChoiceRole | None], Sequence[Choice]]
"""The injected pattern's choices now, after scrolling the given role's option into view."""


class StepFailed(Exception):
    """A step could not be carried out (element missing, navigation failed); the message says why."""


def _target(page: Page, step: Step) -> Locator:
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


def perform_step(page: Page, step: Step, timeout_ms: float) -> None:
    """Carry out one step; `decide` and `wait` only wait (the decision is the operator's own)."""
    try:
        match step.action:
            case "goto":
                page.goto(step.url or "", timeout=timeout_ms, wait_until="load")
            case "click":
                _target(page, step).click(timeout=timeout_ms)
            case "fill":
                _target(page, step).fill(step.value or "", timeout=timeout_ms)
            case "select":
                _target(page, step).select_option(step.value, timeout=timeout_ms)
            case "check":
                _target(page, step).check(timeout=timeout_ms)
            case "uncheck":
                _target(page, step).uncheck(timeout=timeout_ms)
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


def click_choice(page: Page, choices: ChoiceLister, role: ChoiceRole, wait_s: float) -> Choice | None:
    """Scroll the pattern's `role` option into view and click its centre with the real mouse.

    None when no visible option of that role showed up within `wait_s`.
    """
    deadline = time.monotonic() + wait_s
    while True:
        match = next((choice for choice in choices(role) if choice.role == role), None)
        if match is not None and match.visible:
            page.mouse.click(*match.center)
            return match
        if time.monotonic() >= deadline:
            return None
        page.wait_for_timeout(POLL_MS)
