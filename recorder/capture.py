"""Carry out capture plans in Chromium behind the recording proxy and write the snapshot.

Each plan is walked in a browser session of its own (a fresh Chromium profile: no cookies, cache or
storage from another plan), and its records are labelled with the plan's id, so a replayed
episode of one task sees that task's cart, not the cart another plan left behind.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page
from pydantic import Field

from susbench.browser import (
    BrowserBackend,
    LocalBackend,
    ProxyRoute,
    chromium_version,
    find_chromium,
    routed_profile,
)
from susbench.browser.actions import StepFailed, perform_step, scroll_to_bottom
from susbench.core.errors import InputError, SusbenchError
from susbench.core.loading import read_data_file, validate_data
from susbench.core.models import (
    DEFAULT_LOCALE,
    DEFAULT_TIMEZONE,
    CapturePlan,
    Frozen,
    HostMap,
    PageCapture,
    PageLook,
    PlanPage,
    Task,
    Viewport,
)
from susbench.recorder.failures import explain_load_failure
from susbench.recorder.proxy import RecordingProxy
from susbench.recorder.warc_addon import RequestLogEntry

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


class RecordSetup(Frozen):
    """How a recording reaches the sites and what its browser looks like."""

    host_map: HostMap = HostMap()
    upstream_ca: Path | None = Field(default=None, description="CA (PEM) upstream TLS must chain to")
    headless: bool = True
    look: PageLook = PageLook()
    keep_secrets: bool = False
    rate: float = Field(default=0.0, ge=0, description="requests per second per host; 0: no limit")
    burst: int = Field(default=1, ge=1, description="requests a host may get at once before `rate` applies")
    user_agent: str | None = Field(default=None, description="None: Chromium's own")


class SessionRecorder:
    """One browser session behind the recording proxy: the pages it keeps become the snapshot's
    pages, each with the number of requests it made. `asked` is what the session's pages requested
    (method, URL), as Chromium reports it: the proxy also sees Chromium's own background lookups."""

    def __init__(
        self, page: Page, proxy: RecordingProxy, label: str, progress: Callable[[str], None] | None
    ) -> None:
        self.page = page
        self.proxy = proxy
        self.label = label
        self.pages: list[PageCapture] = []
        self.asked: set[tuple[str, str]] = set()
        self.user_agent = str(page.evaluate("navigator.userAgent"))
        self._progress = progress
        page.context.on("request", lambda request: self.asked.add((request.method, request.url)))

    def open(self, plan_page: PlanPage, idle_ms: int, keep: bool = True) -> PageCapture:
        """Load a plan's page and carry out its steps; `keep=False` visits it again unlisted."""
        if self._progress:
            self._progress(plan_page.url)
        capture = _capture_page(self.page, plan_page, idle_ms, self.proxy, self.label)
        if keep:
            self.pages.append(capture)
        return capture

    def act(self, action: Callable[[Page], None], idle_ms: int, note: str) -> PageCapture:
        """Do something on the page (a click) and let it settle; the capture is of wherever it led,
        listed only once the caller `keep`s it."""
        if self._progress:
            self._progress(note)
        before = len(self.proxy.log)
        captured_at = datetime.now(UTC)
        action(self.page)
        _wait_idle(self.page, idle_ms)
        return PageCapture(
            url=self.page.url,
            title=self.page.title(),
            captured_at=captured_at,
            requests=len(self.proxy.log) - before,
            session=self.label,
        )

    def keep(self, capture: PageCapture) -> None:
        self.pages.append(capture)

    def fetch(self, url: str) -> tuple[int, bytes]:
        """GET `url` through the recording proxy with this browser's User-Agent (recorded too)."""
        return self.proxy.fetch(url, {"User-Agent": self.user_agent})


class Walk(Protocol):
    """What one browser session of a recording does: walk a capture plan, or crawl a site."""

    @property
    def label(self) -> str: ...

    def walk(self, session: SessionRecorder) -> None: ...


class PlanWalk:
    """A capture plan's pages, in order."""

    def __init__(self, plan: CapturePlan, label: str) -> None:
        self.plan = plan
        self.label = label

    def walk(self, session: SessionRecorder) -> None:
        for plan_page in self.plan.pages:
            session.open(plan_page, self.plan.idle_ms)


@dataclass(frozen=True)
class Recording:
    """A written snapshot and what its recording saw."""

    path: Path
    pages: tuple[PageCapture, ...]
    log: tuple[RequestLogEntry, ...]
    asked: frozenset[tuple[str, str]] = frozenset()

    def page_requests(self) -> list[RequestLogEntry]:
        """The exchanges the pages asked for (not Chromium's own, nor a robots.txt fetch)."""
        return [entry for entry in self.log if (entry.method, entry.url) in self.asked]


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
    setup = RecordSetup(
        host_map=host_map or HostMap(),
        upstream_ca=upstream_ca,
        headless=headless,
        look=PageLook(viewport=viewport or Viewport(), locale=locale, timezone=timezone),
        keep_secrets=keep_secrets,
    )
    walks = [PlanWalk(plan, label) for plan, label in zip(plans, session_labels(plans), strict=True)]
    return record_walks(walks, out, setup, targets, progress, backend).path


def record_walks(
    walks: Sequence[Walk],
    out: Path,
    setup: RecordSetup,
    targets: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
    backend: BrowserBackend | None = None,
) -> Recording:
    """Every walk in a fresh browser session of its own (its records labelled with the walk's
    label) behind one recording proxy; one WACZ."""
    executable = find_chromium()
    browser_version = chromium_version(executable)
    started = datetime.now(UTC)
    pages: list[PageCapture] = []
    asked: set[tuple[str, str]] = set()
    user_agent = ""
    warcinfo = {"browser": browser_version, "targets": " ".join(targets)}
    launcher = backend or LocalBackend()
    with RecordingProxy(
        host_map=setup.host_map,
        upstream_ca=setup.upstream_ca,
        warcinfo=warcinfo,
        keep_secrets=setup.keep_secrets,
        rate=setup.rate,
        burst=setup.burst,
    ) as proxy:
        profile = routed_profile(
            ProxyRoute(proxy_url=f"http://127.0.0.1:{proxy.port}", spki=proxy.spki),
            setup.look,
            headless=setup.headless,
            executable=executable,
        )
        if setup.user_agent:
            profile = profile.model_copy(update={"extra_args": (f"--user-agent={setup.user_agent}",)})
        for walk in walks:
            proxy.begin_session(walk.label)
            with launcher.launch(profile) as browser:
                session = SessionRecorder(browser.first_page(), proxy, walk.label, progress)
                user_agent = user_agent or session.user_agent
                try:
                    walk.walk(session)
                finally:
                    pages.extend(session.pages)
                    asked |= session.asked
        if not any(entry.status for entry in proxy.log):
            raise SusbenchError(f"nothing was recorded from {', '.join(targets)}: every request failed")
        path = proxy.write_snapshot(
            out,
            created_at=started,
            targets=tuple(targets),
            clock_seed_ms=int(started.timestamp() * 1000),
            timezone=setup.look.timezone,
            locale=setup.look.locale,
            viewport=setup.look.viewport,
            user_agent=user_agent,
            browser_version=browser_version,
            tool_versions={"chromium": browser_version},
            pages=tuple(pages),
        )
        return Recording(path=path, pages=tuple(pages), log=tuple(proxy.log), asked=frozenset(asked))


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
