"""Carry out capture plans in Chromium behind the recording proxy and write the snapshot.

Each plan is walked in a browser session of its own (a fresh Chromium profile: no cookies, cache or
storage from another plan), and its records are labelled with the plan's id, so a replayed
episode of one task sees that task's cart, not the cart another plan left behind.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page

from recorder.failures import explain_load_failure
from recorder.proxy import RecordingProxy
from susbench.browser import (
    BrowserBackend,
    LocalBackend,
    ProxyRoute,
    chromium_version,
    find_chromium,
    routed_profile,
)
from susbench.browser.actions import StepFailed, perform_step, scroll_to_bottom
from susbench.errors import InputError, SusbenchError
from susbench.loading import read_data_file, validate_data
from susbench.models import (
    DEFAULT_LOCALE,
    DEFAULT_TIMEZONE,
    CapturePlan,
    HostMap,
    PageCapture,
    PageLook,
    PlanPage,
    Task,
    Viewport,
)

IDLE_TIMEOUT_MS = 3_000
STEP_TIMEOUT_MS = 10_000


def load_target(target: str) -> CapturePlan:
    """A URL, a capture plan file, or a task file (its `capture` plan, else start_url + reference path)."""
    if "://" in target:
        return CapturePlan(id="url", pages=(PlanPage(url=target),))
    path = Path(target)
    data = read_data_file(path)
    if isinstance(data, dict) and "pages" in data:
        return validate_data(str(path), data, CapturePlan)
    if isinstance(data, dict) and ("start_url" in data or "capture" in data):
        return validate_data(str(path), data, Task).capture_plan()
    raise InputError(f"{path}: neither a capture plan (with 'pages') nor a task (with 'start_url')")


def _wait_idle(page: Page, idle_ms: int) -> None:
    with contextlib.suppress(PlaywrightError):
        page.wait_for_load_state("networkidle", timeout=IDLE_TIMEOUT_MS)
    if idle_ms:
        page.wait_for_timeout(idle_ms)


def session_labels(plans: Sequence[CapturePlan]) -> list[str]:
    """One label per plan: its id, with `-2`, `-3`... for repeated ids (e.g. several bare URLs)."""
    labels: list[str] = []
    seen: dict[str, int] = {}
    for plan in plans:
        count = seen.get(plan.id, 0) + 1
        seen[plan.id] = count
        labels.append(plan.id if count == 1 else f"{plan.id}-{count}")
    return labels


def record_plans(
    plans: Sequence[CapturePlan],
    out: Path,
    host_map: HostMap | None = None,
    upstream_ca: Path | None = None,
    headless: bool = True,
    timezone: str = DEFAULT_TIMEZONE,
    locale: str = DEFAULT_LOCALE,
    viewport: Viewport | None = None,
    targets: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
    backend: BrowserBackend | None = None,
    keep_secrets: bool = False,
) -> Path:
    """Record every plan in a fresh browser session of its own behind one proxy; write one WACZ.

    Pass `backend` to reuse a running Playwright driver (its sync API allows one per thread).
    """
    executable = find_chromium()
    browser_version = chromium_version(executable)
    viewport = viewport or Viewport()
    started = datetime.now(UTC)
    pages: list[PageCapture] = []
    user_agent = ""
    warcinfo = {"browser": browser_version, "targets": " ".join(targets)}
    launcher = backend or LocalBackend()
    with RecordingProxy(
        host_map=host_map, upstream_ca=upstream_ca, warcinfo=warcinfo, keep_secrets=keep_secrets
    ) as proxy:
        profile = routed_profile(
            ProxyRoute(proxy_url=f"http://127.0.0.1:{proxy.port}", spki=proxy.spki),
            PageLook(viewport=viewport, locale=locale, timezone=timezone),
            headless=headless,
            executable=executable,
        )
        for plan, label in zip(plans, session_labels(plans), strict=True):
            proxy.begin_session(label)
            with launcher.launch(profile) as session:
                page = session.first_page()
                user_agent = user_agent or str(page.evaluate("navigator.userAgent"))
                for plan_page in plan.pages:
                    if progress:
                        progress(plan_page.url)
                    pages.append(_capture_page(page, plan_page, plan.idle_ms, proxy, label))
        if not any(entry.status for entry in proxy.log):
            raise SusbenchError(f"nothing was recorded from {', '.join(targets)}: every request failed")
        return proxy.write_snapshot(
            out,
            created_at=started,
            targets=tuple(targets),
            clock_seed_ms=int(started.timestamp() * 1000),
            timezone=timezone,
            locale=locale,
            viewport=viewport,
            user_agent=user_agent,
            browser_version=browser_version,
            tool_versions={"chromium": browser_version},
            pages=tuple(pages),
        )


def _capture_page(
    page: Page, plan_page: PlanPage, idle_ms: int, proxy: RecordingProxy, session: str
) -> PageCapture:
    before = len(proxy.log)
    captured_at = datetime.now(UTC)
    try:
        page.goto(plan_page.url, wait_until="load")
    except PlaywrightError as exc:
        raise SusbenchError(explain_load_failure(plan_page.url, exc.message, proxy.host_map)) from None
    _wait_idle(page, idle_ms)
    if plan_page.scroll_to_bottom:
        scroll_to_bottom(page)
        _wait_idle(page, idle_ms)
    for number, step in enumerate(plan_page.steps, start=1):
        try:
            perform_step(page, step, STEP_TIMEOUT_MS)
        except StepFailed as exc:
            if step.optional:
                continue
            raise SusbenchError(f"{plan_page.url}: step {number} ({step.action}) failed: {exc}") from None
        _wait_idle(page, 0)
    _wait_idle(page, idle_ms)
    time.sleep(0.05)
    return PageCapture(
        url=page.url,
        title=page.title(),
        captured_at=captured_at,
        requests=len(proxy.log) - before,
        session=session,
    )
