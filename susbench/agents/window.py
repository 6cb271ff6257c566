"""The browser window as an agent has it: tabs, the tab in front, and a read-only CDP line to each.

A tab a page opens comes to the front, as it does for a person. Everything read here goes through
Chrome DevTools Protocol domains that leave no trace the page can see (no script runs in the page).
"""

from __future__ import annotations

import time

from playwright.sync_api import CDPSession, Page
from pydantic import Field

from susbench.core.models import Frozen

SETTLE_POLL_S = 0.025
SETTLE_LIMIT_S = 1.5
UNMOVED_S = 0.15


class Tab(Frozen):
    index: int = Field(ge=0)
    title: str
    url: str
    active: bool


class ViewportState(Frozen):
    """What is on screen: size, scroll position and page size, in CSS px."""

    width: int
    height: int
    scroll_x: float = 0.0
    scroll_y: float = 0.0
    page_height: float = 0.0


class BrowserWindow:
    """The agent's tabs over one browser context, with one CDP session per tab."""

    def __init__(self, first_page: Page) -> None:
        self._context = first_page.context
        self._active = first_page
        self._sessions: dict[Page, CDPSession] = {}
        self._context.on("page", self._opened)

    def _opened(self, page: Page) -> None:
        self._active = page

    def close(self) -> None:
        self._context.remove_listener("page", self._opened)
        for page, session in self._sessions.items():
            if not page.is_closed():
                session.detach()
        self._sessions.clear()

    def pages(self) -> list[Page]:
        return [page for page in self._context.pages if not page.is_closed()]

    @property
    def page(self) -> Page:
        """The tab in front (the newest one left if the front tab was closed)."""
        if self._active.is_closed():
            open_pages = self.pages()
            if not open_pages:
                raise RuntimeError("every tab of the episode was closed")
            self._active = open_pages[-1]
        return self._active

    def switch(self, index: int) -> Page:
        open_pages = self.pages()
        if not 0 <= index < len(open_pages):
            raise IndexError(f"there is no tab {index}; {len(open_pages)} tab(s) open (0-based)")
        self._active = open_pages[index]
        self._active.bring_to_front()
        return self._active

    def tabs(self) -> list[Tab]:
        front = self.page
        tabs = []
        for index, page in enumerate(self.pages()):
            info = self.cdp(page).send("Target.getTargetInfo")["targetInfo"]
            tabs.append(Tab(index=index, title=info["title"], url=info["url"], active=page == front))
        return tabs

    def cdp(self, page: Page | None = None) -> CDPSession:
        """A tab's CDP session, the front tab's by default (opened once per tab)."""
        page = page or self.page
        session = self._sessions.get(page)
        if session is None:
            session = self._context.new_cdp_session(page)
            self._sessions[page] = session
        return session

    def viewport(self) -> ViewportState:
        metrics = self.cdp().send("Page.getLayoutMetrics")
        visual = metrics["cssVisualViewport"]
        return ViewportState(
            width=int(visual["clientWidth"]),
            height=int(visual["clientHeight"]),
            scroll_x=float(visual["pageX"]),
            scroll_y=float(visual["pageY"]),
            page_height=float(metrics["cssContentSize"]["height"]),
        )

    def settle_scroll(self, before: ViewportState) -> ViewportState:
        """Wait until a wheel's scroll has moved and stopped (wheel scrolling is asynchronous); a page
        that does not move within a moment had nothing left to scroll."""
        started = time.monotonic()
        last, moved = before, False
        while time.monotonic() - started < SETTLE_LIMIT_S:
            time.sleep(SETTLE_POLL_S)
            now = self.viewport()
            moved = moved or (now.scroll_x, now.scroll_y) != (before.scroll_x, before.scroll_y)
            still = (now.scroll_x, now.scroll_y) == (last.scroll_x, last.scroll_y)
            if (moved and still) or (not moved and time.monotonic() - started >= UNMOVED_S):
                return now
            last = now
        return last
