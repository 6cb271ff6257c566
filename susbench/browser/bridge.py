"""The controller's side of the outcome channel: Python <-> the extension's service worker.

Pages cannot reach the service worker (no `externally_connectable`) and content scripts only send it
observations; the controller talks to it through Playwright (`worker.evaluate`). Each episode gets a
fresh secret that only Python and the service worker know; the final report is signed with
HMAC-SHA256 over its canonical JSON and verified here.

    with LocalBackend().launch(BrowserProfile(extension_dir=build_extension())) as session:
        bridge = ExtensionBridge(session.context)
        bridge.start_episode("ep-1", "pizzapalace-upsell-drinks")   # None = control condition
        page = session.first_page(); page.goto(...)
        click_choice(page, lambda role: bridge.choices(page, scroll_to=role), "safe")  # trusted click
        report = bridge.finish()                                   # ExtensionReport
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from typing import Any

from playwright.sync_api import BrowserContext, Page, Worker
from pydantic import Field

from susbench.core.errors import BrowserError, SusbenchError
from susbench.core.models import (
    AnchorLocator,
    ChoiceRole,
    Condition,
    Event,
    Frozen,
    Identifier,
    Outcome,
    OutcomeKind,
    PatternType,
)


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
        self._secret: str | None = None
        self._episode: tuple[str, str | None] | None = None
        self._pattern_type: PatternType | None = None
        self.worker()

    def worker(self) -> Worker:
        """The extension's service worker, waiting for it to start if needed."""
        for worker in self._context.service_workers:
            if _is_extension_worker(worker):
                return worker
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

    def _call(self, method: str, *args: Any) -> Any:
        script = f"(args) => self.bridge.{method}(...args)"
        return self.worker().evaluate(script, list(args))

    def injection_ids(self) -> list[str]:
        """Ids of the injections built into the loaded extension."""
        return list(self._call("ids"))

    @property
    def pattern_type(self) -> PatternType | None:
        """The running episode's pattern type (None in the control condition)."""
        return self._pattern_type

    def start_episode(
        self, episode_id: str, injection_id: str | None, control: AnchorLocator | None = None
    ) -> None:
        """Hand the episode and its injection (None = control, nothing injected) to the extension.

        `control` is the task's page control whose use with real input completes the task: the
        extension notes each use (`control_used` in the report's events). Call it before the operator
        opens the injection's page; pages opened earlier are not injected.
        """
        if injection_id is not None and injection_id not in self.injection_ids():
            raise SusbenchError(f"injection {injection_id!r} is not in the loaded extension build")
        self._secret = secrets.token_hex(32)
        watched = None if control is None else control.model_dump(mode="json", exclude_none=True)
        self._call("start", episode_id, injection_id, self._secret, watched)
        self._episode = (episode_id, injection_id)
        self._pattern_type = (
            None
            if injection_id is None
            else self.worker().evaluate("(id) => STORE.injections[id].type", injection_id)
        )

    def choices(self, page: Page, scroll_to: ChoiceRole | None = None, wait: float = 0.0) -> list[Choice]:
        """The injected pattern's choices on `page` with viewport rects (empty if nothing injected).

        `scroll_to` first scrolls that role's element to the viewport centre as a person can (the page
        and scrollable boxes move, boxes that clip their overflow do not); `wait` polls that long for
        the pattern to appear (late anchors, delayed pop-ups).
        """
        deadline = time.monotonic() + wait
        while True:
            answer = self._call("choices", page.url, scroll_to)
            found = [Choice.model_validate(item) for item in answer.get("choices", [])]
            if found or time.monotonic() >= deadline:
                return found
            time.sleep(0.1)

    def control_used(self) -> bool:
        """The task's control was used with real input so far in this episode (unsigned, running)."""
        return bool(self._call("status").get("control_used"))

    def marks(self, url: str, request: dict[str, Any]) -> dict[str, Any]:
        """A harness's element ids inside the pattern drawn at `url` (`extension/content/marks.js`):
        `{"op": "mark", "next": N}` numbers its elements from N, `{"op": "unmark"}` takes the ids out of
        their ARIA attributes again, `{"op": "target", "id": ID, "scroll": bool}` says where one is.
        Ids and boxes only: no role, no injection."""
        return dict(self._call("marks", url, request))

    def panel(self, page: Page, scroll: bool = False) -> Box | None:
        """Where the injected pattern is drawn on `page` (None if nothing is injected there)."""
        if scroll:
            self.choices(page, scroll_to=self._first_role(page))
        answer = self._call("choices", page.url, None)
        return Box.model_validate(answer["panel"]) if answer.get("panel") else None

    def _first_role(self, page: Page) -> ChoiceRole | None:
        found = self.choices(page)
        return found[0].role if found else None

    def wait_for_exposure(self, timeout: float = 5.0) -> bool:
        """True once the pattern has been seen: really visible for 300 ms (or interacted with)."""
        deadline = time.monotonic() + timeout
        while not self._call("status")["exposed"]:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return True

    def wait_for_event(self, kind: str, timeout: float = 5.0) -> bool:
        """True once the running episode holds an event of `kind` (False at the deadline)."""
        deadline = time.monotonic() + timeout
        while kind not in self._call("status")["kinds"]:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def _settle(self, quiet: float = 0.1, limit: float = 2.0) -> None:
        """Wait until in-flight content-script reports have landed (the event count stops changing)."""
        deadline = time.monotonic() + limit
        count = self._call("status")["events"]
        while time.monotonic() < deadline:
            time.sleep(quiet)
            now = self._call("status")["events"]
            if now == count:
                return
            count = now

    def collect(self, timeout: float = 2.0) -> SignedReport:
        """End the episode in the extension and take its signed report, as it was sent."""
        if self._episode is None or self._secret is None:
            raise SusbenchError("collect() without start_episode()")
        self._settle(limit=timeout)
        return SignedReport.model_validate(self._call("finish"))

    def verify(self, signed: SignedReport) -> ExtensionReport:
        """The report, trusted only if it was signed with this episode's secret for this episode."""
        if self._episode is None or self._secret is None:
            raise SusbenchError("verify() without start_episode()")
        payload = signed.payload.encode("utf-8")
        expected = hmac.new(bytes.fromhex(self._secret), payload, hashlib.sha256).hexdigest()
        data = json.loads(signed.payload)
        valid = (
            hmac.compare_digest(expected, signed.signature)
            and (
                data.get("episode_id"),
                data.get("injection_id"),
            )
            == self._episode
        )
        return ExtensionReport.model_validate({**data, "signature_valid": valid})

    def finish(self, timeout: float = 2.0) -> ExtensionReport:
        """End the episode: score it, verify the signature, and stop injecting."""
        try:
            return self.verify(self.collect(timeout))
        finally:
            self._episode, self._secret = None, None
