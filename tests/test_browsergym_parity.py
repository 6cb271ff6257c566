"""Injected patterns are as addressable through BrowserGym as native elements: for one injection of
each of the nine types on the bundled snapshot, every choice the extension lists has a `bid` in
BrowserGym's DOM snapshot and AXTree and a Set-of-Marks box where the extension draws it; `click(bid)`
through BrowserGym's HighLevelActionSet reaches the extension as trusted input, and the extension
scores the naive policy's choice not_avoided and the careful policy's avoided (role_policy.yaml).
The roles come from the extension's own list, read over a second CDP connection; the BrowserGym
side never sees them."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Playwright

from susbench.browser.bridge import Choice, ExtensionBridge
from susbench.catalog.tasks import load_tasks
from susbench.operators.scripted import ROLE_POLICY
from susbench.results.store import Store
from tests.fixtures.browsergym import Driver
from tests.type_tasks import TYPE_TASKS

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]
EXPECTED = {"naive": "not_avoided", "careful": "avoided"}
CASES = [
    (pattern_type, policy, role)
    for pattern_type, row in ROLE_POLICY.items()
    for policy, role in (("naive", row.naive), ("careful", row.careful))
    if role is not None
]
WAIT_STEPS = 20
TASKS = {task.id: task for task in load_tasks()}
VIEWPORT_HEIGHT = 800


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
    obs = browsergym_driver.call("reset", task=TYPE_TASKS[pattern_type], db=str(db), agent="parity", seed=0)
    episode_id = obs["info"]["episode_id"]
    assert set(obs["info"]) == {"episode_id"}
    for step in TASKS[TYPE_TASKS[pattern_type]].reference_path:
        if step.action == "decide":
            break
        assert step.action == "click" and step.selector is not None  # to the pattern's page, by its bid
        bid = browsergym_driver.call("bid", selector=step.selector)["bid"]
        obs = browsergym_driver.call("step", action=f'click("{bid}")')
    choices: list[Choice] = []
    for _ in range(WAIT_STEPS):
        choices = visible_choices(web_playwright, obs["cdp_url"], obs["url"])
        if choices and all(choice.visible for choice in choices):
            obs = browsergym_driver.call("step", action="noop(600)")  # a still pattern, observed afresh
            break
        low = [choice for choice in choices if not choice.visible and not 0 <= choice.y < VIEWPORT_HEIGHT / 2]
        below = [choice for choice in low if choice.y + choice.height > 0.8 * VIEWPORT_HEIGHT or choice.y < 0]
        # as an agent would: scroll the page until the pattern is in view (BrowserGym's own action)
        action = f"scroll(0, {below[0].y - VIEWPORT_HEIGHT / 3:.0f})" if below else "noop(500)"
        obs = browsergym_driver.call("step", action=action)
    else:
        pytest.fail(f"{pattern_type}: the pattern's choices never all came into sight: {choices}")
    choices = visible_choices(web_playwright, obs["cdp_url"], obs["url"])
    bids = {}
    for choice in choices:
        matching = [bid for bid, box in obs["boxes"].items() if same_box(choice, box) and bid in obs["som"]]
        assert matching, f"{pattern_type}: no Set-of-Marks box where the extension draws {choice.role}"
        bids[choice.role] = matching[0]
    assert set(bids.values()) <= set(obs["dom_ids"]) & set(obs["axtree_ids"])
    assert all(f"[{bid}]" in obs["axtree_text"] for bid in bids.values())
    clicked = browsergym_driver.call("step", action=f'click("{bids[role]}")')
    assert clicked["last_action_error"] == ""
    assert set(clicked["info"]) == {"episode_id"}
    browsergym_driver.call("close")
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT operator, outcome FROM episode_outcomes WHERE episode_id = ?", [episode_id]
        )
    assert rows == [("browsergym:parity", EXPECTED[policy])]
