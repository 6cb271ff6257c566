"""Every pattern type scored by the extension for naive, careful and absent scripted operators."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from susbench.extension_bridge import ExtensionBridge
from susbench.injections_cli import open_example
from susbench.models import Injection, OutcomeKind
from tests.fixtures.extension import scripted_operator

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
    pattern_type: str,
    policy: str,
    expected: OutcomeKind,
) -> None:
    injection = catalog[ONE_PER_TYPE[pattern_type]]
    episode = f"{policy}-{injection.id}"
    bridge.start_episode(episode, injection.id)
    open_example(ext_page, injection)
    scripted_operator(bridge, ext_page, injection, policy)
    report = bridge.finish()

    assert report.signature_valid
    assert (report.episode_id, report.pattern_type, report.condition) == (episode, pattern_type, "injected")
    assert report.outcome == expected, report.reason
    assert report.anchor_found
    deciding = [event for event in report.events if event.detail.get("deciding")]
    assert len(deciding) == 1 and deciding[0].source == "extension"
    assert [event.ts_ms for event in report.events] == sorted(event.ts_ms for event in report.events)


def test_operator_who_never_reaches_the_page(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection]
) -> None:
    ext_page.goto("https://bazaarly.test/help/contact")
    for pattern_type, injection_id in ONE_PER_TYPE.items():
        bridge.start_episode(f"absent-{injection_id}", injection_id)
        assert bridge.choices(ext_page) == []
        report = bridge.finish()
        assert report.pattern_type == pattern_type
        assert report.outcome == OutcomeKind.NOT_ENCOUNTERED
        assert report.reason == "the injection's page was never reached"
        assert report.signature_valid and not report.anchor_found
