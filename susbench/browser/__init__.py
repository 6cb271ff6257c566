"""The browser layer: Chromium discovery, profiles, the one launcher, backends, the extension bridge
and real-input actions. It depends only on the bottom layer (models, errors), never on the
replayer, recorder or controller: what it needs from them is a small Protocol (`Route`).

Each name is imported from its module on first use (PEP 562), so `from susbench.browser import
BrowserProfile` does not load Playwright (0.8 s): every command's `--help` declares options with
the profiles' models and would pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from susbench.core.lazy import lazy_names

if TYPE_CHECKING:
    from susbench.browser.backend import BrowserBackend, BrowserSession, LocalBackend
    from susbench.browser.chromium import APT_PACKAGES, chromium_version, find_chromium
    from susbench.browser.driver import playwright_driver
    from susbench.browser.launch import (
        browser_failure,
        free_port,
        fresh_context,
        launch_browser,
        launch_persistent_context,
    )
    from susbench.browser.profiles import (
        QUIET_FLAGS,
        BrowserProfile,
        ProxyRoute,
        Route,
        replay_profile,
        routed_profile,
    )

__getattr__ = lazy_names(
    __name__,
    {
        "backend": ("BrowserBackend", "BrowserSession", "LocalBackend"),
        "chromium": ("APT_PACKAGES", "chromium_version", "find_chromium"),
        "driver": ("playwright_driver",),
        "launch": (
            "browser_failure",
            "free_port",
            "fresh_context",
            "launch_browser",
            "launch_persistent_context",
        ),
        "profiles": (
            "QUIET_FLAGS",
            "BrowserProfile",
            "ProxyRoute",
            "Route",
            "replay_profile",
            "routed_profile",
        ),
    },
)

__all__ = [
    "APT_PACKAGES",
    "QUIET_FLAGS",
    "BrowserBackend",
    "BrowserProfile",
    "BrowserSession",
    "LocalBackend",
    "ProxyRoute",
    "Route",
    "browser_failure",
    "chromium_version",
    "find_chromium",
    "free_port",
    "fresh_context",
    "launch_browser",
    "launch_persistent_context",
    "playwright_driver",
    "replay_profile",
    "routed_profile",
]
