"""Carrying out an agent's actions as real input: Playwright's mouse and keyboard (CDP `Input.*`),
so every event the page and the injection extension see is trusted, as a person's would be.

An action that cannot be carried out (a point outside the viewport, an element number the latest
observation did not list, a key no keyboard has, a tab that does not exist) raises `ActionRefused`
with a message for the model; the episode goes on.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page

from susbench.agents.actions import (
    ActionRefused,
    AgentAction,
    Click,
    Done,
    Drag,
    Goto,
    History,
    MouseButton,
    Move,
    Press,
    Screenshot,
    Scroll,
    SwitchTab,
    TypeText,
    Wait,
)
from susbench.agents.keys import UnknownKey, key_combination
from susbench.agents.observe import Element
from susbench.agents.window import BrowserWindow
from susbench.browser.bridge import Box

SETTLE_S = 0.15
SCROLL_INTO_VIEW_TRIES = 4


class Executor:
    """Acts in the front tab of a browser window; remembers where the mouse is."""

    def __init__(self, window: BrowserWindow, timeout_s: float) -> None:
        self.window = window
        self.timeout_ms = 1000 * timeout_s
        self.mouse: tuple[float, float] = (0.0, 0.0)

    def run(self, action: AgentAction, elements: dict[int, Element]) -> dict[str, Any]:
        """Carry out one action; returns it as recorded (with the point it happened at, if any)."""
        record = action.model_dump(mode="json", exclude_none=True)
        record["action"] = action.action
        try:
            point = self._run(action, elements)
        except PlaywrightError as exc:
            raise ActionRefused(f"{action.action} failed: {str(exc).splitlines()[0]}") from None
        except UnknownKey as exc:
            raise ActionRefused(str(exc)) from None
        if point is not None:
            record["at"] = {"x": round(point[0], 1), "y": round(point[1], 1)}
        return record

    @property
    def page(self) -> Page:
        return self.window.page

    def _run(self, action: AgentAction, elements: dict[int, Element]) -> tuple[float, float] | None:
        match action:
            case Click():
                return self._click(action, elements)
            case TypeText():
                point = (
                    None if action.element is None else self._click(Click(element=action.element), elements)
                )
                self.page.keyboard.type(action.text)
                return point
            case Press():
                self._press(action)
                return None
            case Scroll():
                return self._scroll(action)
            case Move():
                self._move(self._inside(action.x, action.y))
                return self.mouse
            case Drag():
                points = [self._inside(point.x, point.y) for point in action.path]
                self._move(points[0])
                self.page.mouse.down()
                for point in points[1:]:
                    self._move(point, steps=5)
                self.page.mouse.up()
                return points[-1]
            case MouseButton():
                if action.x is not None and action.y is not None:
                    self._move(self._inside(action.x, action.y))
                (self.page.mouse.down if action.action == "mouse_down" else self.page.mouse.up)()
                self._settle()
                return self.mouse
            case Goto():
                url = action.url if "://" in action.url else f"https://{action.url}"
                self.page.goto(url, wait_until="load", timeout=self.timeout_ms)
                return None
            case History():
                moved = (self.page.go_back if action.action == "back" else self.page.go_forward)(
                    wait_until="load", timeout=self.timeout_ms
                )
                if moved is None:
                    raise ActionRefused(f"there is no page to go {action.action} to in this tab")
                return None
            case SwitchTab():
                try:
                    self.window.switch(action.tab)
                except IndexError as exc:
                    raise ActionRefused(str(exc)) from None
                return None
            case Wait():
                self.page.wait_for_timeout(1000 * action.seconds)
                return None
            case Screenshot() | Done():
                return None
        raise ActionRefused(f"unsupported action {action.action!r}")

    def _inside(self, x: float, y: float) -> tuple[float, float]:
        viewport = self.window.viewport()
        if not (0 <= x < viewport.width and 0 <= y < viewport.height):
            raise ActionRefused(
                f"({x:.0f}, {y:.0f}) is outside the {viewport.width}x{viewport.height} viewport; "
                "coordinates are CSS pixels from its top-left corner"
            )
        return x, y

    def _move(self, point: tuple[float, float], steps: int = 1) -> None:
        self.page.mouse.move(point[0], point[1], steps=steps)
        self.mouse = point

    def _click(self, action: Click, elements: dict[int, Element]) -> tuple[float, float]:
        if action.element is not None:
            point = self._element_point(action.element, elements)
        else:
            assert action.x is not None and action.y is not None
            point = self._inside(action.x, action.y)
        held = action.modifiers  # already in Playwright's spelling (Click's validator)
        for key in held:
            self.page.keyboard.down(key)
        try:
            self.page.mouse.click(point[0], point[1], button=action.button, click_count=action.clicks)
        finally:
            for key in reversed(held):
                self.page.keyboard.up(key)
        self.mouse = point
        self._settle()
        return point

    def _element_point(self, number: int, elements: dict[int, Element]) -> tuple[float, float]:
        """The centre of element N now, wheeling it into view first if it is off screen."""
        element = elements.get(number)
        if element is None:
            known = f"1-{max(elements)}" if elements else "none"
            raise ActionRefused(f"there is no element {number} in the latest observation (numbers: {known})")
        for _ in range(SCROLL_INTO_VIEW_TRIES):
            box = self._current_box(element)
            viewport = self.window.viewport()
            inside = box.clipped(viewport.width, viewport.height)
            if inside is not None and inside.width * inside.height >= 0.5 * box.width * box.height:
                return inside.center
            centre_y = box.y + box.height / 2
            self._wheel(viewport.width / 2, viewport.height / 2, 0.0, centre_y - viewport.height / 2)
        raise ActionRefused(f"element {number} could not be scrolled into view")

    def _current_box(self, element: Element) -> Box:
        try:
            quads = self.window.cdp().send("DOM.getContentQuads", {"backendNodeId": element.node})["quads"]
        except PlaywrightError:
            raise ActionRefused(f"element {element.id} is no longer on the page; look again") from None
        if not quads:
            raise ActionRefused(f"element {element.id} is not rendered any more; look again")
        xs, ys = quads[0][0::2], quads[0][1::2]
        return Box(x=min(xs), y=min(ys), width=max(xs) - min(xs), height=max(ys) - min(ys))

    def _scroll(self, action: Scroll) -> tuple[float, float]:
        viewport = self.window.viewport()
        x = viewport.width / 2 if action.x is None else action.x
        y = viewport.height / 2 if action.y is None else action.y
        self._inside(x, y)
        self._wheel(x, y, action.dx, action.dy)
        return x, y

    def _wheel(self, x: float, y: float, dx: float, dy: float) -> None:
        if self.mouse != (x, y):
            self._move((x, y))
        before = self.window.viewport()
        self.page.mouse.wheel(dx, dy)
        self.window.settle_scroll(before)

    def _press(self, action: Press) -> None:
        chord = key_combination(action.keys)
        if action.hold_s <= 0:
            self.page.keyboard.press(chord)
        else:
            keys = chord.split("+") if chord != "+" else ["+"]
            for key in keys:
                self.page.keyboard.down(key)
            self.page.wait_for_timeout(1000 * action.hold_s)
            for key in reversed(keys):
                self.page.keyboard.up(key)
        self._settle()

    def _settle(self) -> None:
        """Give a navigation the input may have started its time to load (waiting inside Playwright,
        so it hears of the navigation: a plain sleep would leave it a stale URL and load state)."""
        self.page.wait_for_timeout(1000 * SETTLE_S)
        try:
            self.page.wait_for_load_state("load", timeout=self.timeout_ms)
        except PlaywrightError as exc:
            raise ActionRefused(f"the page did not finish loading: {str(exc).splitlines()[0]}") from None
