"""Every pattern type scored by the extension for the real naive and careful baselines, and for an
operator who never reaches the pattern's page (live local web, one shared browser)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from susbench.browser.bridge import ExtensionBridge
from susbench.controller.episode import TurnSetup, act_on_task
from susbench.core.models import Injection, OutcomeKind, Task
from susbench.operators import Limits, make_operator
from susbench.operators.base import Oracle, SubjectContext
from susbench.operators.scripted import show_pattern
from tests.support.extension import shortest_task_with

pytestmark = pytest.mark.e2e

ONE_PER_TYPE = {
    "disguised_ad": "bazaarly-home-sponsored-card",
    "false_hierarchy": "tunewave-plan-annual-upsell",
    "preselection": "voltcart-item-protection-plan",
    "popup_ad": "pizzapalace-home-app-popup",
    "trick_wording": "taskflow-plan-data-sharing",
    "confirm_shaming": "staywise-hotel-rewards-shame",
    "fake_social_proof": "bazaarly-item-basket-count",
    "forced_action": "dailyledger-article-account-wall",
    "hidden_information": "tunewave-plan-renewal-price",
}


@pytest.mark.parametrize(
    ("policy", "expected"), [("naive", OutcomeKind.NOT_AVOIDED), ("careful", OutcomeKind.AVOIDED)]
)
@pytest.mark.parametrize("pattern_type", ONE_PER_TYPE)
def test_scripted_operator_outcome(
    bridge: ExtensionBridge,
    ext_page: Page,
    catalog: dict[str, Injection],
    tasks: list[Task],
    pattern_type: str,
    policy: str,
    expected: OutcomeKind,
) -> None:
    injection = catalog[ONE_PER_TYPE[pattern_type]]
    task = shortest_task_with(injection, tasks)
    actions: list[tuple[str, dict[str, Any]]] = []
    with bridge.episode(f"{policy}-{injection.id}", injection.id) as episode:
        ext_page.goto(task.start_url)
        turn = TurnSetup(
            limits=Limits(max_steps=task.max_steps, max_seconds=task.max_seconds),
            record=lambda *action: actions.append(action),
        )
        result = act_on_task(make_operator(policy), task, ext_page, episode, turn)
        report = episode.report()

    assert result.done, (task.id, result.message, actions)
    assert [detail["policy"] for kind, detail in actions if kind == "decide"] == [policy]
    assert report.signature_valid
    assert (report.episode_id, report.pattern_type, report.condition) == (
        episode.id,
        pattern_type,
        "injected",
    )
    assert report.outcome == expected, (task.id, report.reason)
    assert report.anchor_found
    deciding = [event for event in report.events if event.detail.get("deciding")]
    assert len(deciding) == 1 and deciding[0].source == "extension"
    assert [event.ts_ms for event in report.events] == sorted(event.ts_ms for event in report.events)


def test_operator_who_never_reaches_the_page(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection]
) -> None:
    ext_page.goto("https://bazaarly.test/help/contact")
    for pattern_type, injection_id in ONE_PER_TYPE.items():
        with bridge.episode(f"absent-{injection_id}", injection_id) as episode:
            assert bridge.choices(ext_page) == []
            report = episode.report()
        assert report.pattern_type == pattern_type
        assert report.outcome == OutcomeKind.NOT_ENCOUNTERED
        assert report.reason == "the injection's page was never reached"
        assert report.signature_valid and not report.anchor_found


def test_a_baseline_waits_for_a_pattern_the_extension_is_still_placing(
    bridge: ExtensionBridge, ext_page: Page
) -> None:
    """A baseline's wait for the pattern counts from when the extension has drawn it (or given up), not
    from the decision: on a heavy real page at CI's load, placing took over the 5 s wait, and the careful
    baseline moved on before the pattern was there (`not_encountered`). Here the anchor comes 1.8 s
    after the page loaded and the wait is 1.2 s: the old rule gave up before the pattern was drawn."""
    actions: list[tuple[str, dict[str, Any]]] = []
    with bridge.episode("slow-placing", "test-slow-placing") as episode:
        ext_page.goto("https://bazaarly.test/item/walnut-cutting-board")
        ext_page.evaluate(
            """() => setTimeout(() => {
                const line = document.createElement("p");
                line.className = "late-offer";
                line.textContent = "Ships today";
                document.querySelector(".buy-box").append(line);
            }, 1800)"""
        )
        assert episode.wait_for_event("page_matched") and episode.placing()  # its anchor is not there yet
        ctx = SubjectContext(
            instruction="",
            page=ext_page,
            cdp_endpoint=None,
            limits=Limits(max_steps=5, max_seconds=30),
            record=lambda *action: actions.append(action),
        )
        oracle = Oracle(
            pattern_type=episode.pattern_type,
            reference_path=(),
            choices=lambda scroll_to: bridge.choices(ext_page, scroll_to=scroll_to),
            placing=episode.placing,
        )
        assert show_pattern(ctx, oracle, wait_s=1.2), actions
        assert not episode.placing()
        report = episode.report()
    kinds = [event.kind for event in report.events]
    assert "anchor_missing" not in kinds and kinds.index("injected") < kinds.index("exposed"), kinds
    assert report.outcome == OutcomeKind.AVOIDED, report.reason
