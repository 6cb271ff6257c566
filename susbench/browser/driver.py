"""The Playwright driver of this thread: its sync API allows one per thread, so whoever starts one
first (a test session, a command) lends it to everything started inside."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Playwright, sync_playwright

_running = threading.local()


@contextmanager
def playwright_driver(playwright: Playwright | None = None) -> Iterator[Playwright]:
    """The given driver, else the one running on this thread, else a new one for the block."""
    lent = playwright or getattr(_running, "driver", None)
    if lent is not None:
        yield lent
        return
    with sync_playwright() as started:
        _running.driver = started
        try:
            yield started
        finally:
            _running.driver = None
