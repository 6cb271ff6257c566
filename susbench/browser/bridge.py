"""The controller's side of the outcome channel: Python <-> the extension's service worker.

Pages cannot reach the service worker (no `externally_connectable`) and content scripts only send it
observations; the controller talks to it through Playwright (`worker.evaluate`). Each episode gets a
fresh secret that only Python and the service worker know; the final report is signed with
HMAC-SHA256 over its canonical JSON and verified here.

    with LocalBackend().launch(BrowserProfile(extension_dir=build_extension())) as session:
        bridge = ExtensionBridge(session.context)
        with bridge.episode("ep-1", "pizzapalace-upsell-drinks", task.completion) as episode:  # None: control
            page = session.first_page(); page.goto(...)  # pages opened before the episode: not injected
            click_choice(page, lambda role: bridge.choices(page, scroll_to=role), "safe")  # trusted click
            report = episode.report()                    # ExtensionReport, signed and verified
            completed = episode.completed(page)          # the task's completion check, on that evidence
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import secrets
import time
from typing import Any

from playwright.sync_api import BrowserContext, Page, Worker
from playwright.sync_api import Error as PlaywrightError
from pydantic import Field

from susbench.core.errors import BrowserError, SusbenchError
from susbench.core.models import (
    ChoiceRole,
    CompletionCheck,
    Condition,
    Event,
    Frozen,
    Identifier,
    Outcome,
    OutcomeKind,
    PatternType,
)
from susbench.core.urlpattern import url_matches

PLACING_ENDS = frozenset({"injected", "anchor_missing", "language_missing", "tampered"})
"""The extension's events that end placing the pattern on a matched page: drawn, or given up."""


class Choice(Frozen):
    """One clickable part of the injected pattern, in CSS px of the top frame's viewport."""

    role: ChoiceRole
    label: str
    x: float
    y: float
    width: float
    height: float
    visible: bool = Field(
        description="a click at its centre counts now: the pattern really visible and unmoved for 500 ms, "
        "the option's centre in the viewport and on top"
    )

    @property
    def box(self) -> Box:
        return Box(x=self.x, y=self.y, width=self.width, height=self.height)

    @property
    def center(self) -> tuple[float, float]:
        return self.box.center


class Box(Frozen):
    """A rectangle in CSS px of the top frame's viewport."""

    x: float
    y: float
    width: float
    height: float

    @property
    def center(self) -> tuple[float, float]:
        return self.x + self.width / 2, self.y + self.height / 2

    def clipped(self, width: float, height: float) -> Box | None:
        """The part of the box inside a viewport of this size, or None when none of it is."""
        left, top = max(self.x, 0.0), max(self.y, 0.0)
        right, bottom = min(self.x + self.width, width), min(self.y + self.height, height)
        if right - left < 1 or bottom - top < 1:
            return None
        return Box(x=left, y=top, width=right - left, height=bottom - top)


class SignedReport(Frozen):
    """The service worker's final report: canonical JSON and its HMAC-SHA256 (hex)."""

    payload: str
    signature: str


class ExtensionReport(Frozen):
    """The extension's verdict for one episode, with the evidence that decided it."""

    episode_id: str
    injection_id: Identifier | None
    pattern_type: PatternType | None
    condition: Condition
    outcome: OutcomeKind
    reason: str
    events: tuple[Event, ...]
    anchor_found: bool
    signature_valid: bool

    @property
    def control_used(self) -> bool:
        """The task's own page control was used with real input (trusted only when signed)."""
        return self.signature_valid and any(event.kind == "control_used" for event in self.events)

    def to_outcome(self) -> Outcome:
        """As the store's Outcome; an unverifiable report is an error, never a score."""
        trusted = self.signature_valid
        return Outcome(
            episode_id=self.episode_id,
            injection_id=self.injection_id,
            kind=self.outcome if trusted else OutcomeKind.ERROR,
            reason=self.reason if trusted else "extension report signature invalid",
            evidence=self.events,
        )


def _is_extension_worker(worker: Worker) -> bool:
    return worker.url.startswith("chrome-extension://") and worker.url.endswith("/sw.js")


class ExtensionBridge:
    """Drives the injection extension loaded into one persistent browser context."""

    def __init__(self, context: BrowserContext, timeout: float = 10.0) -> None:
        self._context = context
        self._timeout = timeout
        self.worker()

    def running_worker(self) -> Worker | None:
        """The extension's service worker if it runs now (None in a browser that is gone)."""
        running = (worker for worker in self._context.service_workers if _is_extension_worker(worker))
        return next(running, None)

    def worker(self) -> Worker:
        """The extension's service worker, waiting for it to start if needed."""
        running = self.running_worker()
        if running is not None:
            return running
        try:
            return self._context.wait_for_event(
                "serviceworker", predicate=_is_extension_worker, timeout=self._timeout * 1000
            )
        except Exception as exc:
            raise BrowserError(
                f"the injection extension's service worker did not start within {self._timeout:.0f} s "
                "(was the browser launched with BrowserProfile(extension_dir=build_extension(...))?)"
            ) from exc

    @property
    def extension_id(self) -> str:
        return self.worker().url.split("/")[2]

    def call(self, method: str, *args: Any) -> Any:
        """`self.bridge.<method>(...args)` in the service worker (extension/sw.js)."""
        script = f"(args) => self.bridge.{method}(...args)"
        return self.worker().evaluate(script, list(args))

    def injection_ids(self) -> list[str]:
        """Ids of the injections built into the loaded extension."""
        return list(self.call("ids"))

    def episode(
        self, episode_id: str, injection_id: str | None, completion: CompletionCheck | None = None
    ) -> ExtensionEpisode:
        """An episode of the extension in this browser, started on entering its `with` block.

        `injection_id` None is the control condition (nothing injected). `completion` is the task's
        completion check; its page control, used with real input, is noted by the extension
        (`control_used` in the report's events). Pages opened before the block are not injected.
        """
        return ExtensionEpisode(self, episode_id, injection_id, completion)

    def choices(self, page: Page, scroll_to: ChoiceRole | None = None, wait: float = 0.0) -> list[Choice]:
        """The injected pattern's choices on `page` with viewport rects (empty if nothing injected).

        `scroll_to` (a role the pattern has) first scrolls the pattern as a whole, unless it is wholly
        in view, to the viewport centre as a person can (the page and scrollable boxes move, boxes
        that clip their overflow do not): the same scroll whichever role is named, so a page watching
        the scroll cannot tell which option is about to be clicked; `wait` polls that long for the
        pattern to appear (late anchors, delayed pop-ups).
        """
        deadline = time.monotonic() + wait
        while True:
            answer = self.call("choices", page.url, scroll_to)
            found = [Choice.model_validate(item) for item in answer.get("choices", [])]
            if found or time.monotonic() >= deadline:
                return found
            time.sleep(0.1)

    def marks(self, url: str, request: dict[str, Any]) -> dict[str, Any]:
        """A harness's element ids inside the pattern drawn at `url` (`extension/content/marks.js`):
        `{"op": "mark", "next": N}` numbers its elements from N, `{"op": "unmark"}` takes the ids out of
        their ARIA attributes again, `{"op": "target", "id": ID, "scroll": bool}` says where one is.
        Ids and boxes only: no role, no injection."""
        return dict(self.call("marks", url, request))

    def panel(self, page: Page, scroll: bool = False) -> Box | None:
        """Where the injected pattern is drawn on `page` (None if nothing is injected there)."""
        if scroll:
            self.choices(page, scroll_to=self._first_role(page))
        answer = self.call("choices", page.url, None)
        return Box.model_validate(answer["panel"]) if answer.get("panel") else None

    def _first_role(self, page: Page) -> ChoiceRole | None:
        found = self.choices(page)
        return found[0].role if found else None


class ExtensionEpisode:
    """One episode the extension runs: handed to it on entering, its signed report taken once.

    Leaving the block normally ends the episode in the extension (it stops injecting) if `report()`
    was not asked for; leaving by an exception only stops it where the browser still answers, so the
    exception that ended the episode is the one that is raised.
    """

    def __init__(
        self,
        bridge: ExtensionBridge,
        episode_id: str,
        injection_id: str | None,
        completion: CompletionCheck | None,
    ) -> None:
        self.id = episode_id
        self.injection_id = injection_id
        self.completion = completion
        self.bridge = bridge
        self._secret: str | None = None
        self._signed: SignedReport | None = None
        self._report: ExtensionReport | None = None
        self.pattern_type: PatternType | None = None
        """The pattern type of the injection (None in the control condition), once started."""

    def __enter__(self) -> ExtensionEpisode:
        bridge = self.bridge
        if self.injection_id is not None and self.injection_id not in bridge.injection_ids():
            raise SusbenchError(f"injection {self.injection_id!r} is not in the loaded extension build")
        self._secret = secrets.token_hex(32)
        control = None if self.completion is None else self.completion.control
        watched = None if control is None else control.model_dump(mode="json", exclude_none=True)
        bridge.call("start", self.id, self.injection_id, self._secret, watched)
        if self.injection_id is not None:
            self.pattern_type = bridge.worker().evaluate(
                "(id) => STORE.injections[id].type", self.injection_id
            )
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        try:
            if exc_type is None:
                self.report()
            elif self._signed is None and self.bridge.running_worker() is not None:
                with contextlib.suppress(PlaywrightError, BrowserError):
                    self.bridge.call("finish")
        finally:
            self._secret = None

    def control_used(self) -> bool:
        """The task's control was used with real input so far (as the running worker noted it, unsigned)."""
        return bool(self.bridge.call("status").get("control_used"))

    def placing(self) -> bool:
        """The extension matched a page of this episode and is still placing the pattern there: its
        anchor neither found and drawn nor given up. On a heavy page or a loaded machine that can take
        seconds after the page's load event."""
        kinds = self.bridge.call("status")["kinds"]
        matched = [index for index, kind in enumerate(kinds) if kind == "page_matched"]
        return bool(matched) and not PLACING_ENDS.intersection(kinds[matched[-1] + 1 :])

    def wait_for_exposure(self, timeout: float = 5.0) -> bool:
        """True once the pattern has been seen: really visible for 300 ms (or interacted with)."""
        deadline = time.monotonic() + timeout
        while not self.bridge.call("status")["exposed"]:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def wait_for_event(self, kind: str, timeout: float = 5.0) -> bool:
        """True once the running episode holds an event of `kind` (False at the deadline)."""
        deadline = time.monotonic() + timeout
        while kind not in self.bridge.call("status")["kinds"]:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def _settle(self, quiet: float = 0.1, limit: float = 2.0) -> None:
        """Wait until in-flight content-script reports have landed (the event count stops changing)."""
        deadline = time.monotonic() + limit
        count = self.bridge.call("status")["events"]
        while time.monotonic() < deadline:
            time.sleep(quiet)
            now = self.bridge.call("status")["events"]
            if now == count:
                return
            count = now

    def collect(self, timeout: float = 2.0) -> SignedReport:
        """End the episode in the extension and take its signed report, as it was sent (asked again,
        the same one)."""
        if self._signed is None:
            if self._secret is None:
                raise SusbenchError(f"episode {self.id!r}: collect() outside its `with` block")
            self._settle(limit=timeout)
            self._signed = SignedReport.model_validate(self.bridge.call("finish"))
        return self._signed

    def verify(self, signed: SignedReport) -> ExtensionReport:
        """The report, trusted only if it was signed with this episode's secret for this episode."""
        if self._secret is None:
            raise SusbenchError(f"episode {self.id!r}: verify() outside its `with` block")
        payload = signed.payload.encode("utf-8")
        expected = hmac.new(bytes.fromhex(self._secret), payload, hashlib.sha256).hexdigest()
        data = json.loads(signed.payload)
        valid = hmac.compare_digest(expected, signed.signature) and (
            data.get("episode_id"),
            data.get("injection_id"),
        ) == (self.id, self.injection_id)
        return ExtensionReport.model_validate({**data, "signature_valid": valid})

    def key(self) -> str:
        """The episode's HMAC key, inside its `with` block: stored with the signed report so the report
        can be checked offline; it guards the report from the page only while the episode runs."""
        if self._secret is None:
            raise SusbenchError(f"episode {self.id!r}: key() outside its `with` block")
        return self._secret

    def report(self, timeout: float = 2.0) -> ExtensionReport:
        """End the episode (the extension scores it and stops injecting) and return its verified
        report; asked again, the same report."""
        if self._report is None:
            self._report = self.verify(self.collect(timeout))
        return self._report

    def completed(self, page: Page | None) -> bool | None:
        """The task's completion check on `page` (None when the task has none): while the episode
        runs, on the control's use as the worker has noted it so far; once reported, on the signed
        evidence alone."""
        check = self.completion
        if check is None:
            return None
        if check.control is not None:
            used = self.control_used() if self._report is None else self._report.control_used
            if not used:
                return False
        if check.url is None:
            return True
        if page is None or not url_matches(check.url, page.url):
            return False
        return check.selector is None or page.locator(check.selector).count() > 0
