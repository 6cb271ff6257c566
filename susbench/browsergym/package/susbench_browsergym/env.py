"""BrowserGym's `BrowserEnv`, attached to a SusBench episode's Chromium instead of launching its own.

Three things differ from a stock BrowserEnv, each because SusBench's extension must score the agent:

- The browser. Extensions run only in a persistent context or in the default context of a browser
  reached over CDP; BrowserEnv launches a browser and makes a new context, where none would run.
  Here its `launch` connects over CDP to the episode's Chromium (our launcher, extension and replay)
  and its `new_context` is that browser's default context; the agent works in the tab the controller
  opened on the start page, as every other operator does.
- The marking. BrowserGym numbers elements (`bid`) from a script in the page's main world that walks
  open shadow roots only; the pattern is drawn in a closed one. After that script, the extension
  (asked through the controller, over a channel the page cannot reach) numbers the pattern's elements
  from BrowserGym's own counter on, with the same attributes, so they appear in the DOM snapshot,
  the AXTree and the Set-of-Marks as native elements do.
- The actions. Playwright's locators cannot enter a closed shadow root either, so `click("<bid>")`
  and the other element actions reach those elements through `PatternLocator`: the extension says
  where the element is, and the click is real mouse input at its centre, as Playwright's own is.

The action code, the observation extraction and the agent are BrowserGym's own, unchanged.
"""

from __future__ import annotations

import base64
import io
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import browsergym.core.chat as chat_module
import browsergym.core.env as env_module
import playwright.sync_api
from browsergym.core.action.base import execute_python_code
from browsergym.core.env import BrowserEnv
from browsergym.utils.obs import flatten_axtree_to_str
from PIL import Image

from susbench_browsergym.host import catalog


class SusbenchEnv(BrowserEnv):
    """A BrowserEnv whose task is a SusBench episode (see the module's docstring)."""

    def reset(
        self, seed: int | None = None, *args: Any, **kwargs: Any
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self._end_episode()
        real = env_module._get_global_playwright()
        attach = _patched(env_module, "_get_global_playwright", lambda: _EpisodePlaywright(real, self))
        chat = _patched(chat_module, "_get_global_playwright", lambda: _ChatPlaywright(real))
        with attach, chat:
            obs, info = super().reset(seed, *args, **kwargs)
        self._steps = 0
        self._last_obs = obs
        return obs, info

    def step(self, action: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """BrowserEnv's step, with the pattern's ids addressable; each step is sent for the trace."""
        observed = self._last_obs
        started = time.time()
        self.last_action = action
        info, send_message_to_user, report_infeasible_instructions = self.pre_step()
        try:
            code = self.action_mapping(action) if self.action_mapping else action
            execute_python_code(
                code,
                AddressablePage(self.page, self.task),
                send_message_to_user=send_message_to_user,
                report_infeasible_instructions=report_infeasible_instructions,
            )
            self.last_action_error = ""
        except Exception as exc:  # noqa: BLE001 - BrowserGym's own rule: the error goes back to the agent
            self.last_action_error = f"{type(exc).__name__}: {exc}"
        acted = time.time()
        obs, reward, terminated, truncated, info = self.post_step(info)
        self.task.record_step(
            {
                "index": self._steps,
                "ts_ms": int(1000 * started),
                "url": observed["url"],
                "title": observed["open_pages_titles"][int(observed["active_page_index"][0])],
                "tabs": len(observed["open_pages_urls"]),
                "screenshot": _png(observed["screenshot"]),
                "observation_text": flatten_axtree_to_str(observed["axtree_object"]),
                "action": action,
                "action_error": self.last_action_error,
                "act_ms": 1000 * (acted - started),
                "observe_ms": 1000 * (time.time() - acted),
            }
        )
        self._steps += 1
        self._last_obs = obs
        return obs, reward, terminated, truncated, info

    def _get_obs(self) -> dict[str, Any]:
        marking, unmarking = env_module._pre_extract, env_module._post_extract

        def pre_extract(page: playwright.sync_api.Page, *args: Any, **kwargs: Any) -> None:
            marking(page, *args, **kwargs)
            self.task.mark(page)

        def post_extract(page: playwright.sync_api.Page) -> None:
            self.task.unmark(page)
            unmarking(page)

        with (
            _patched(env_module, "_pre_extract", pre_extract),
            _patched(env_module, "_post_extract", post_extract),
        ):
            return super()._get_obs()

    def close(self) -> None:
        self._end_episode()
        super().close()

    def _end_episode(self) -> None:
        """End the running episode first: the controller stores it and closes its browser (so the
        default context is not BrowserEnv's to close)."""
        if self.task is None:
            return
        self.task.teardown()
        self.task = None
        self.context = None
        if self.chat is not None:
            self.chat.close()
            self.chat = None
        if self.browser is not None:
            self.browser.close()
            self.browser = None


class AddressablePage:
    """The env's page as the action code sees it: a pattern element's `bid` finds a `PatternLocator`."""

    def __init__(self, page: playwright.sync_api.Page, task: Any) -> None:
        self._page = page
        self._task = task

    def get_by_test_id(self, test_id: str) -> Any:
        if test_id in getattr(self._page, "_susbench_ids", ()):
            return PatternLocator(self._page, self._task, test_id)
        return self._page.get_by_test_id(test_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._page, name)


class PatternLocator:
    """An element inside the pattern's closed shadow root, acted on with real input at its centre."""

    def __init__(self, page: playwright.sync_api.Page, task: Any, bid: str) -> None:
        self.page = page
        self.task = task
        self.bid = bid

    def _where(self, scroll: bool) -> dict[str, Any]:
        return self.task.target(self.page, self.bid, scroll)

    def count(self) -> int:
        return 1 if self._where(False).get("found") else 0

    def scroll_into_view_if_needed(self, timeout: float | None = None) -> None:
        self._where(True)

    def bounding_box(self, timeout: float | None = None) -> dict[str, float] | None:
        box = self._where(False)
        return {key: box[key] for key in ("x", "y", "width", "height")} if box.get("found") else None

    def _centre(self, force: bool) -> tuple[float, float]:
        box = self._where(True)
        if not box.get("found"):
            raise playwright.sync_api.Error(f'element with bid "{self.bid}" is no longer in the page')
        if not box["on_top"] and not force:
            raise playwright.sync_api.TimeoutError(
                f'Timeout 500ms exceeded: element with bid "{self.bid}" is covered by another element'
            )
        return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    def click(
        self,
        button: str = "left",
        modifiers: list[str] = (),
        force: bool = False,
        timeout: float | None = None,
        click_count: int = 1,
    ) -> None:
        x, y = self._centre(force)
        for key in modifiers:
            self.page.keyboard.down(key)
        self.page.mouse.click(x, y, button=button, click_count=click_count)
        for key in reversed(modifiers):
            self.page.keyboard.up(key)

    def dblclick(
        self,
        button: str = "left",
        modifiers: list[str] = (),
        force: bool = False,
        timeout: float | None = None,
    ) -> None:
        self.click(button, modifiers, force, timeout, click_count=2)

    def hover(self, force: bool = False, timeout: float | None = None) -> None:
        self.page.mouse.move(*self._centre(force))

    def focus(self, timeout: float | None = None) -> None:
        self.click()

    def set_checked(self, checked: bool, force: bool = False, timeout: float | None = None) -> None:
        if self._where(True).get("checked") is not checked:
            self.click(force=force)

    def check(self, force: bool = False, timeout: float | None = None) -> None:
        self.set_checked(True, force)

    def uncheck(self, force: bool = False, timeout: float | None = None) -> None:
        self.set_checked(False, force)

    def clear(self, force: bool = False, timeout: float | None = None) -> None:
        self.click(force=force)
        self.page.keyboard.press("ControlOrMeta+A")
        self.page.keyboard.press("Backspace")

    def fill(self, value: str, force: bool = False, timeout: float | None = None) -> None:
        self.clear(force)
        self.page.keyboard.insert_text(value)

    def type(self, value: str, delay: float = 0, timeout: float | None = None) -> None:
        self.page.keyboard.type(value, delay=delay)

    def press(self, key: str, timeout: float | None = None) -> None:
        self.focus()
        self.page.keyboard.press(key)

    def select_option(self, *args: Any, **kwargs: Any) -> None:
        raise playwright.sync_api.Error(f'element with bid "{self.bid}" is not a <select>')

    def set_input_files(self, *args: Any, **kwargs: Any) -> None:
        raise playwright.sync_api.Error(f'element with bid "{self.bid}" is not a file input')


class _EpisodePlaywright:
    """BrowserEnv's Playwright, whose `chromium.launch` attaches to the episode's browser instead."""

    def __init__(self, real: playwright.sync_api.Playwright, env: SusbenchEnv) -> None:
        self.selectors = real.selectors
        self.chromium = self
        self._real = real
        self._env = env

    def launch(self, headless: bool = True, **_: Any) -> _EpisodeBrowser:
        self._env.task.env = self._env
        ready = self._env.task.start(headless=headless)
        return _EpisodeBrowser(self._real.chromium.connect_over_cdp(ready["cdp_url"]))


class _EpisodeBrowser:
    """The episode's browser over CDP: its one context is the default one, where the extension runs."""

    def __init__(self, browser: playwright.sync_api.Browser) -> None:
        self._browser = browser

    def new_context(self, **_: Any) -> playwright.sync_api.BrowserContext:
        return self._browser.contexts[0]

    def close(self) -> None:
        self._browser.close()  # over CDP: disconnects; the controller closes the browser


class _ChatPlaywright:
    """The chat window's Playwright: its own small browser, this install's Chromium (Playwright 1.44's
    own build is never downloaded)."""

    def __init__(self, real: playwright.sync_api.Playwright) -> None:
        self._real = real
        self.chromium = self
        self.selectors = real.selectors

    def launch(self, **kwargs: Any) -> playwright.sync_api.Browser:
        return self._real.chromium.launch(executable_path=catalog()["chromium"], **kwargs)


@contextmanager
def _patched(module: Any, name: str, value: Any) -> Iterator[None]:
    original = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, original)


def _png(screenshot: Any) -> str:
    out = io.BytesIO()
    Image.fromarray(screenshot).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()
