"""Browser backends: where an episode's Chromium runs, behind one small Protocol.

A session is always Chromium's default context (where the injection extension runs) plus, when
the profile asks for it, a CDP endpoint for agents that bring their own driver. A backend that runs
Chromium elsewhere (a container reached with `connect_over_cdp`, whose `browser.contexts[0]` is
that default context) returns the same `BrowserSession`, so operators and the controller never
know which backend they got.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from playwright.sync_api import BrowserContext, Page, Playwright

from susbench.browser.driver import playwright_driver
from susbench.browser.launch import free_port, launch_persistent_context
from susbench.browser.profiles import BrowserProfile


@dataclass(frozen=True)
class BrowserSession:
    """A running browser for one episode."""

    context: BrowserContext
    profile: BrowserProfile
    cdp_endpoint: str | None

    def first_page(self) -> Page:
        """The tab Chromium opened at start (or a new one): episodes start there."""
        return self.context.pages[0] if self.context.pages else self.context.new_page()

    def active_page(self) -> Page | None:
        """The newest tab, where the user's flow ended."""
        return self.context.pages[-1] if self.context.pages else None


class BrowserBackend(Protocol):
    """Starts a browser for one episode and always cleans it up."""

    def launch(self, profile: BrowserProfile) -> AbstractContextManager[BrowserSession]: ...


class LocalBackend:
    """Chromium on this machine, in a fresh temporary profile per launch."""

    def __init__(self, playwright: Playwright | None = None) -> None:
        self._playwright = playwright

    @contextmanager
    def launch(self, profile: BrowserProfile) -> Iterator[BrowserSession]:
        cdp_port = free_port() if profile.cdp else None
        with (
            tempfile.TemporaryDirectory(prefix="susbench-profile-") as user_data_dir,
            playwright_driver(self._playwright) as playwright,
            launch_persistent_context(playwright, profile, Path(user_data_dir), cdp_port) as context,
        ):
            yield BrowserSession(
                context=context,
                profile=profile,
                cdp_endpoint=f"http://127.0.0.1:{cdp_port}" if cdp_port else None,
            )
