"""Outcomes the page cannot bend (issue 16): every case of tests/data/hostile_cases.yaml, a hostile or
quirky page behaviour of the local web met by a real scripted operator clicking by coordinates or by
locator, scores what the rules define; and the pattern leaves no copied look on its host.

`pytest tests/test_extension_hostile.py --extension-at 337f432` runs the same pages against the
extension as it was when the attacks were found.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from susbench.browser import BrowserSession
from susbench.browser.actions import ClickMode
from susbench.browser.bridge import ExtensionBridge
from susbench.core.models import Injection, Task
from tests.hostile_cases import HostileCase, host_look, load_cases, run_case

pytestmark = pytest.mark.e2e

CASES = load_cases()


@pytest.mark.parametrize(("case", "clicks"), CASES, ids=[case.name(clicks) for case, clicks in CASES])
def test_the_page_cannot_bend_the_outcome(
    ext_session: BrowserSession,
    bridge: ExtensionBridge,
    catalog: dict[str, Injection],
    tasks: list[Task],
    case: HostileCase,
    clicks: ClickMode,
) -> None:
    report, actions = run_case(ext_session.context, bridge, case, clicks, catalog[case.injection], tasks)
    assert report.signature_valid
    evidence = [(event.kind, event.detail.get("why") or event.detail.get("role")) for event in report.events]
    assert report.outcome == case.expected, (report.reason, evidence, actions)


def test_host_shows_nothing_of_the_look(
    bridge: ExtensionBridge, ext_page: Page, catalog: dict[str, Injection]
) -> None:
    injection = catalog["voltcart-item-protection-plan"]
    bridge.start_episode("fingerprint", injection.id)
    ext_page.goto(str(injection.page.example))
    assert bridge.choices(ext_page, wait=5.0), "the pattern was not drawn"
    look = host_look(ext_page)
    bridge.finish()
    assert look["own"] == look["inherited"]  # the page's own custom properties, none of the copied look
    assert not look["empty"]
