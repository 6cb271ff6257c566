"""The one Chromium launcher: a plain browser (fresh contexts per page load, as `replay check` uses)
or a persistent context (the only kind that runs extensions), both from one `BrowserProfile`."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from playwright.sync_api import Browser, BrowserContext, Playwright
from playwright.sync_api import Error as PlaywrightError

from susbench.browser.chromium import find_chromium
from susbench.browser.profiles import BrowserProfile
from susbench.core.errors import BrowserError

Started = TypeVar("Started", Browser, BrowserContext)
API_PREFIX = re.compile(r"^[A-Za-z]+\.[A-Za-z]+: ")


def browser_failure(message: str) -> str:
    """Chromium's words from a Playwright error, without the API call that raised it (`Page.goto: `)."""
    first_line = message.splitlines()[0] if message else "unknown reason"
    return API_PREFIX.sub("", first_line)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def context_options(profile: BrowserProfile) -> dict[str, Any]:
    """What every browser context of the profile shares: viewport, locale, time zone, no service workers."""
    return {
        "viewport": {"width": profile.viewport.width, "height": profile.viewport.height},
        "locale": profile.locale,
        "timezone_id": profile.timezone,
        "service_workers": "block" if profile.block_service_workers else "allow",
    }


def browser_env() -> dict[str, str]:
    """This process's environment for Chromium: a shared Playwright driver may predate `DISPLAY`
    (a virtual screen started after it), and a headed browser needs the current one."""
    return dict(os.environ)


def _start(profile: BrowserProfile, start: Callable[[Path], Started]) -> Started:
    executable = profile.executable or find_chromium()
    try:
        return start(executable)
    except PlaywrightError as exc:
        raise BrowserError(f"{executable}: Chromium failed to start: {exc}") from None


@contextmanager
def launch_browser(playwright: Playwright, profile: BrowserProfile) -> Iterator[Browser]:
    """A plain Chromium with the profile's flags; open pages in `fresh_context` (no extensions there)."""
    browser = _start(
        profile,
        lambda executable: playwright.chromium.launch(
            executable_path=str(executable), headless=profile.headless, args=profile.args(), env=browser_env()
        ),
    )
    try:
        yield browser
    finally:
        browser.close()


@contextmanager
def launch_persistent_context(
    playwright: Playwright, profile: BrowserProfile, user_data_dir: Path, cdp_port: int | None = None
) -> Iterator[BrowserContext]:
    """Chromium's default context in `user_data_dir`: where the profile's extension runs."""
    context = _start(
        profile,
        lambda executable: playwright.chromium.launch_persistent_context(
            user_data_dir,
            executable_path=str(executable),
            headless=profile.headless,
            args=profile.args(cdp_port),
            env=browser_env(),
            **context_options(profile),
        ),
    )
    try:
        yield context
    finally:
        context.close()


def fresh_context(browser: Browser, profile: BrowserProfile) -> BrowserContext:
    """A new context of a plain browser with the profile's viewport, locale and time zone."""
    return browser.new_context(**context_options(profile))
