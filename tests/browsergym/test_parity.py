"""Injected patterns are as addressable through BrowserGym as native elements: for one injection of
each of the nine types on the bundled snapshot, every choice the extension lists has a `bid` in
BrowserGym's DOM snapshot and AXTree and a Set-of-Marks box where the extension draws it; `click(bid)`
through BrowserGym's HighLevelActionSet reaches the extension as trusted input, and the extension
scores the naive policy's choice not_avoided and the careful policy's avoided (role_policy.yaml), one
policy per type.
The roles come from the extension's own list, read over a second CDP connection; the BrowserGym
side never sees them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Playwright

from susbench.browser.bridge import Choice, ExtensionBridge
from susbench.catalog.tasks import load_tasks
from susbench.operators.scripted import ROLE_POLICY
from susbench.results.store import Store
from tests.support.browsergym import Driver
from tests.support.episode_evidence import as_json, choices_text, event_lines, now_ms, story, told_on_failure
from tests.support.type_tasks import TYPE_TASKS

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]
EXPECTED = {"naive": "not_avoided", "careful": "avoided"}


def one_policy_per_type() -> list[tuple[str, str, str]]:
    """BrowserGym is one operator protocol, so it runs once over the nine types (issue 20): each type with
    one policy, naive and careful taking turns where a type has both. Every choice of each type is still
    checked addressable; both policies' scoring of every type is test_controller_e2e's."""
    chosen: list[tuple[str, str, str]] = []
    naive_next = False
    for pattern_type, row in ROLE_POLICY.items():
        options = [
            (policy, role) for policy, role in (("naive", row.naive), ("careful", row.careful)) if role
        ]
        if len(options) == 2:
            options = [options[0] if naive_next else options[1]]
            naive_next = not naive_next
        chosen.append((pattern_type, *options[0]))
    return chosen


CASES = one_policy_per_type()
WAIT_STEPS = 20
# BrowserGym gives a click 500 ms; on a loaded machine a page still settling can outlast them.
CLICK_TRIES = 3
TASKS = {task.id: task for task in load_tasks()}
VIEWPORT_HEIGHT = 800
# What a failure tells of each driver answer (not the AXTree's text: the ids and boxes say enough).
TOLD = ("url", "bid", "last_action_error", "reward", "terminated", "info", "ids", "som", "boxes")
# The running episode's events, from the extension's ledger (its secret stays there).
LEDGER = """async () => {
  const saved = await chrome.storage.session.get("ledger");
  return saved.ledger ? saved.ledger.events : [];
}"""


def visible_choices(web_playwright: Playwright, cdp_url: str, url: str) -> list[Choice]:
    browser = web_playwright.chromium.connect_over_cdp(cdp_url)
    try:
        context = browser.contexts[0]
        page = next(page for page in context.pages if page.url == url)
        return ExtensionBridge(context).choices(page)
    finally:
        browser.close()  # over CDP: only this connection


def same_box(choice: Choice, box: list[float] | None) -> bool:
    """The extension's rect of the choice is BrowserGym's box of the element (None: no layout box)."""
    return box is not None and all(
        abs(a - b) < 1.0 for a, b in zip((choice.x, choice.y, choice.width, choice.height), box, strict=True)
    )


def ledger_events(web_playwright: Playwright, cdp_url: str) -> list[tuple[int, str, Any]]:
    """The running episode's events as the extension holds them: its run holds the DuckDB until closed."""
    browser = web_playwright.chromium.connect_over_cdp(cdp_url)
    try:
        events = ExtensionBridge(browser.contexts[0]).worker().evaluate(LEDGER)
    finally:
        browser.close()  # over CDP: only this connection
    return [(event["ts_ms"], f"extension:{event['kind']}", event["detail"]) for event in events]


@dataclass
class DriverCall:
    """One command to the driver, what it answered and each list of choices the test read after it."""

    ts_ms: int
    op: str
    command: dict[str, Any]
    answer: dict[str, Any]
    looks: list[tuple[int, list[Choice]]] = field(default_factory=list)

    def lines(self, start_ms: int, before: DriverCall | None) -> list[str]:
        """The call and its answer (folded when it is the answer before), then each look after it."""
        same = before is not None and before.answer == self.answer
        answer = "the same as the call before" if same else as_json(self.answer)
        return [
            f"  {self.ts_ms - start_ms:+7d} ms  {self.op} {as_json(self.command)} -> {answer}",
            *(f"  {ts_ms - start_ms:+7d} ms    {choices_text(choices)}" for ts_ms, choices in self.looks),
        ]


class Trail:
    """The driver's calls as the test makes them, kept so that a failure can tell the whole episode.
    Until `close` the run holds its DuckDB, so the extension's events come from its ledger over CDP."""

    def __init__(self, driver: Driver, web_playwright: Playwright, db: Path) -> None:
        self.driver = driver
        self.web_playwright = web_playwright
        self.db = db
        self.calls: list[DriverCall] = []
        self.cdp_url: str | None = None
        self.closed = False

    def call(self, op: str, **command: Any) -> dict[str, Any]:
        answer = self.driver.call(op, **command)
        self.calls.append(
            DriverCall(now_ms(), op, command, {key: answer[key] for key in TOLD if key in answer})
        )
        self.cdp_url = answer.get("cdp_url", self.cdp_url)
        self.closed = self.closed or op == "close"
        return answer

    def looked(self, choices: list[Choice]) -> list[Choice]:
        self.calls[-1].looks.append((now_ms(), choices))
        return choices

    def story(self) -> str:
        """Every call, then the running episode's events. Once the episode is stored, the conftest's
        section (tests/support/evidence.py) prints its outcome, events and replay log from the DuckDB."""
        if not self.calls or self.cdp_url is None:
            return "the driver did not answer the reset"
        episode_id = str(self.calls[0].answer["info"]["episode_id"])
        events: list[tuple[int, str, Any]] = []
        unreadable: dict[str, list[str]] = {}
        if not self.closed:
            try:
                events = ledger_events(self.web_playwright, self.cdp_url)
            except Exception as exc:  # noqa: BLE001 - the calls still tell what the test saw
                unreadable = {"events unreadable": [f"  {type(exc).__name__}: {exc}"]}
        start = events[0][0] if events else self.calls[0].ts_ms
        calls: list[str] = []
        for index, call in enumerate(self.calls):
            calls += call.lines(start, self.calls[index - 1] if index else None)
        state = (
            "stored: its events are in the episodes section"
            if self.closed
            else "still running: events over CDP"
        )
        return story(
            f"episode {episode_id} ({state})",
            {
                "driver calls as answered, each with the choices the extension listed after it": calls,
                "events (ms since the first)": event_lines(events, start),
                **unreadable,
            },
        )


@pytest.mark.parametrize(("pattern_type", "policy", "role"), CASES, ids=[f"{t}-{p}" for t, p, _ in CASES])
def test_every_choice_is_addressable_and_click_bid_is_scored(
    pattern_type: str,
    policy: str,
    role: str,
    browsergym_driver: Driver,
    web_playwright: Playwright,
    tmp_path: Path,
) -> None:
    db = tmp_path / "browsergym.duckdb"
    trail = Trail(browsergym_driver, web_playwright, db)
    with told_on_failure(trail.story):
        obs = trail.call("reset", task=TYPE_TASKS[pattern_type], db=str(db), agent="parity", seed=0)
        episode_id = obs["info"]["episode_id"]
        assert set(obs["info"]) == {"episode_id"}
        for step in TASKS[TYPE_TASKS[pattern_type]].reference_path:
            if step.action == "decide":
                break
            assert step.action == "click" and step.selector is not None  # to the pattern's page, by its bid
            bid = trail.call("bid", selector=step.selector)["bid"]
            before = obs["url"]
            obs = trail.call("step", action=f'click("{bid}")')
            # As an agent would: again when BrowserGym's 500 ms ran out and, a moment later, the page
            # is still the one clicked on (a click that timed out waiting after it may have led on).
            for _ in range(CLICK_TRIES - 1):
                if "Timeout" not in obs["last_action_error"] or obs["url"] != before:
                    break
                obs = trail.call("step", action="noop(1000)")
                if obs["url"] != before:
                    break
                obs = trail.call("step", action=f'click("{bid}")')
        choices: list[Choice] = []
        for _ in range(WAIT_STEPS):
            choices = trail.looked(visible_choices(web_playwright, obs["cdp_url"], obs["url"]))
            if choices and all(choice.visible for choice in choices):
                obs = trail.call("step", action="noop(600)")  # a still pattern, observed afresh
                break
            low = [
                choice for choice in choices if not choice.visible and not 0 <= choice.y < VIEWPORT_HEIGHT / 2
            ]
            below = [
                choice for choice in low if choice.y + choice.height > 0.8 * VIEWPORT_HEIGHT or choice.y < 0
            ]
            # as an agent would: scroll the page until the pattern is in view (BrowserGym's own action)
            action = f"scroll(0, {below[0].y - VIEWPORT_HEIGHT / 3:.0f})" if below else "noop(500)"
            obs = trail.call("step", action=action)
        else:
            pytest.fail(f"{pattern_type}: the pattern's choices never all came into sight: {choices}")
        choices = trail.looked(visible_choices(web_playwright, obs["cdp_url"], obs["url"]))
        bids = {}
        for choice in choices:
            matching = [
                bid for bid, box in obs["boxes"].items() if same_box(choice, box) and bid in obs["som"]
            ]
            assert matching, f"{pattern_type}: no Set-of-Marks box where the extension draws {choice.role}"
            bids[choice.role] = matching[0]
        assert set(bids.values()) <= set(obs["dom_ids"]) & set(obs["axtree_ids"])
        assert all(f"[{bid}]" in obs["axtree_text"] for bid in bids.values())
        clicked = trail.call("step", action=f'click("{bids[role]}")')
        assert clicked["last_action_error"] == ""
        assert set(clicked["info"]) == {"episode_id"}
        trail.call("close")
        with Store(db, read_only=True) as store:
            _, rows = store.query(
                "SELECT operator, outcome FROM episode_outcomes WHERE episode_id = ?", [episode_id]
            )
        assert rows == [("browsergym:parity", EXPECTED[policy])]
