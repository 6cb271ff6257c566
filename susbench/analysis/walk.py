"""Walk task flows on a replayed snapshot in Chromium with the injection extension, and observe.

Each task's capture plan (the flow the recorder walked) is replayed twice over: once plainly, to
keep every page's visible text and a full-page screenshot, and once per injection of the task,
with the extension given that injection, stopping at the injection's page to ask the extension
whether its anchor was found (its own matcher, late anchors and fallbacks included).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, Playwright

from susbench.browser import BrowserSession, LocalBackend, replay_profile
from susbench.browser.actions import StepFailed, perform_step
from susbench.browser.bridge import ExtensionBridge
from susbench.core.models import Frozen, Injection, Task
from susbench.core.urlpattern import url_matches
from susbench.replayer.factory import replay_server
from susbench.replayer.service import ReplayService

SETTLE_MS = 2_500
STEP_TIMEOUT_MS = 10_000
ANCHOR_WAIT_S = 3.0  # the content script gives a late anchor 2.5 s
AnchorStatus = Literal["anchored", "missing", "not_reached", "error"]


class PageObservation(Frozen):
    """One document reached while walking a task: where, what it says, what it looks like."""

    task_id: str
    index: int
    url: str
    text: str
    screenshot: Path | None
    error: str | None = None


class AnchorObservation(Frozen):
    """Whether the extension found an injection's anchor on its page, and by which locator."""

    injection_id: str
    task_id: str
    status: AnchorStatus
    url: str | None = None
    locator: int | None = None
    reason: str = ""


class SideObservation(Frozen):
    pages: tuple[PageObservation, ...]
    anchors: tuple[AnchorObservation, ...]


def _settle(page: Page) -> None:
    with contextlib.suppress(PlaywrightError):
        page.wait_for_load_state("networkidle", timeout=SETTLE_MS)
    with contextlib.suppress(PlaywrightError):
        page.evaluate("document.fonts.ready.then(() => true)")


def walk(page: Page, task: Task, on_document: Callable[[Page, int], bool]) -> str | None:
    """Carry out the task's capture plan; `on_document(page, index)` runs at every new document and
    stops the walk by returning True. Returns the failure (a step that could not be done), if any."""
    assert task.capture is not None
    index = 0
    for plan_page in task.capture.pages:
        try:
            page.goto(plan_page.url, wait_until="load")
        except PlaywrightError as exc:
            return f"{plan_page.url} did not load: {exc.message.splitlines()[0]}"
        _settle(page)
        if on_document(page, index):
            return None
        index += 1
        for number, step in enumerate(plan_page.steps, start=1):
            before = page.url
            try:
                perform_step(page, step, STEP_TIMEOUT_MS)
            except StepFailed as exc:
                if step.optional:
                    continue
                return f"{plan_page.url}: step {number} ({step.action}) failed: {exc}"
            _settle(page)
            if page.url != before:
                if on_document(page, index):
                    return None
                index += 1
    return None


class SnapshotWalker:
    """One replayed snapshot and one Chromium with the extension, for many walks."""

    def __init__(self, session: BrowserSession, server: ReplayService, shots: Path) -> None:
        self._session = session
        self._server = server
        self._bridge = ExtensionBridge(session.context)
        self._shots = shots

    @contextmanager
    def _fresh_page(self) -> Iterator[Page]:
        self._server.new_episode()
        self._session.context.clear_cookies()
        page = self._session.context.new_page()
        try:
            yield page
        finally:
            page.close()

    def pages(self, task: Task) -> list[PageObservation]:
        found: list[PageObservation] = []

        def observe(page: Page, index: int) -> bool:
            target = self._shots / f"{task.id}-{index}.png"
            page.screenshot(path=str(target), full_page=True, animations="disabled", caret="hide")
            text = str(page.evaluate("document.body ? document.body.innerText : ''"))
            found.append(
                PageObservation(task_id=task.id, index=index, url=page.url, text=text, screenshot=target)
            )
            return False

        with self._fresh_page() as page:
            failure = walk(page, task, observe)
        if failure:
            found.append(
                PageObservation(
                    task_id=task.id, index=len(found), url="", text="", screenshot=None, error=failure
                )
            )
        return found

    def anchor(self, task: Task, injection: Injection) -> AnchorObservation:
        reached: list[str] = []

        def on_page(page: Page, index: int) -> bool:
            if not url_matches(injection.page.url, page.url):
                return False
            reached.append(page.url)
            self._bridge.choices(page, wait=ANCHOR_WAIT_S)
            return True

        with (
            self._bridge.episode(f"drift-{injection.id}", injection.id) as episode,
            self._fresh_page() as page,
        ):
            failure = walk(page, task, on_page)
            report = episode.report()
        locators = [event.detail.get("locator") for event in report.events if event.kind == "anchor_found"]
        if not reached:
            status: AnchorStatus = "error" if failure else "not_reached"
            return AnchorObservation(
                injection_id=injection.id,
                task_id=task.id,
                status=status,
                reason=failure or "the walk never reached the injection's page",
            )
        return AnchorObservation(
            injection_id=injection.id,
            task_id=task.id,
            status="anchored" if report.anchor_found else "missing",
            url=reached[0],
            locator=int(locators[0]) if locators and locators[0] is not None else None,
            reason=report.reason,
        )


def observe_snapshot(
    playwright: Playwright,
    snapshot: Path,
    tasks: Sequence[Task],
    injections: dict[str, Injection],
    extension_dir: Path,
    shots: Path,
    progress: Callable[[str], None] | None = None,
) -> SideObservation:
    """Every task's pages, and every injection's anchor (on the first selected task carrying it);
    `progress` hears of each task walked."""
    shots.mkdir(parents=True, exist_ok=True)
    pages: list[PageObservation] = []
    anchors: list[AnchorObservation] = []
    with replay_server(snapshot, "direct") as server:
        profile = replay_profile(server).model_copy(update={"extension_dir": extension_dir})
        with LocalBackend(playwright).launch(profile) as session:
            walker = SnapshotWalker(session, server, shots)
            done: set[str] = set()
            for number, task in enumerate(tasks, start=1):
                if progress:
                    progress(f"{snapshot.name}: task {number}/{len(tasks)} {task.id}")
                pages += walker.pages(task)
                for injection_id in task.injections:
                    if injection_id not in done:
                        done.add(injection_id)
                        anchors.append(walker.anchor(task, injections[injection_id]))
    return SideObservation(pages=tuple(pages), anchors=tuple(anchors))
