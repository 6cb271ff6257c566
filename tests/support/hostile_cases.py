"""The hostile and quirky page suite (tests/data/hostile_cases.yaml): one case is a quirk of the local
web, an injection and a real operator; `run_case` plays it in a browser carrying the extension and
returns the extension's verdict. Shared by tests/extension/test_hostile.py and tools/hostile_table.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from playwright.sync_api import BrowserContext, Page
from pydantic import Field

from susbench.browser.actions import ClickMode
from susbench.browser.bridge import ExtensionBridge, ExtensionReport
from susbench.controller.episode import TurnSetup, act_on_task
from susbench.core.loading import load_model
from susbench.core.models import Frozen, Identifier, Injection, OutcomeKind, Task
from susbench.operators import Limits, OperatorSettings
from susbench.operators.scripted import IdleOperator, ScriptedOperator
from susbench.web.quirks import COOKIE
from tests.support.extension import shortest_task_with

CASES_FILE = Path(__file__).parents[1] / "data" / "hostile_cases.yaml"
IDLE_STAY_MS = 2000  # how long the idle visitor stays on the page it opened
Operator = Literal["naive", "careful", "idle"]
# What each operator scores on a plain page of the suite (its pattern below the fold for `idle`).
PLAIN_OUTCOME: dict[Operator, OutcomeKind] = {
    "naive": OutcomeKind.NOT_AVOIDED,
    "careful": OutcomeKind.AVOIDED,
    "idle": OutcomeKind.NOT_ENCOUNTERED,
}


# Page JavaScript: find the injected host as any script can (an attribute-less div without element
# children that already has a shadow root), and read the custom properties it shows beside its parent's.
HOST_LOOK = """() => {
  const host = [...document.querySelectorAll("div")].find((el) => {
    if (el.attributes.length || el.children.length) return false;
    try { el.attachShadow({ mode: "open" }); return false; } catch { return true; }
  });
  const custom = (el) => {
    const style = getComputedStyle(el);
    const names = [...style].filter((name) => name.startsWith("--"));
    return names.map((name) => `${name}:${style.getPropertyValue(name)}`);
  };
  return { inherited: custom(host.parentElement), own: custom(host), empty: host.matches(":empty") };
}"""


class HostileCase(Frozen):
    """A page behaviour, the injection it meets and the operator who meets it, with the outcome due."""

    quirk: str
    attack: Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, "benign"]
    injection: Identifier
    operator: Operator
    clicks: tuple[ClickMode, ...] = ("coordinates", "locator")
    outcome: Literal["unchanged", "tampered"]

    @property
    def expected(self) -> OutcomeKind:
        return PLAIN_OUTCOME[self.operator] if self.outcome == "unchanged" else OutcomeKind.TAMPERED

    def name(self, clicks: ClickMode) -> str:
        return f"{self.quirk}-{self.injection}-{self.operator}-{clicks}"


class HostileCases(Frozen):
    cases: tuple[HostileCase, ...] = Field(min_length=1)


def load_cases() -> list[tuple[HostileCase, ClickMode]]:
    """Every case once per way of clicking it lists."""
    cases = load_model(CASES_FILE, HostileCases).cases
    return [(case, clicks) for case in cases for clicks in case.clicks]


def host_look(page: Page) -> dict[str, Any]:
    """What page JavaScript reads off the injected host: its custom properties, its parent's, `:empty`."""
    return dict(page.evaluate(HOST_LOOK))


def run_case(
    context: BrowserContext,
    bridge: ExtensionBridge,
    case: HostileCase,
    clicks: ClickMode,
    injection: Injection,
    tasks: list[Task],
) -> tuple[ExtensionReport, list[tuple[str, dict[str, Any]]]]:
    """One episode of the case's operator on the task of its injection, with the quirk switched on."""
    task = shortest_task_with(injection, tasks)
    policy = None if case.operator == "idle" else case.operator
    operator = (
        IdleOperator(OperatorSettings()) if policy is None else ScriptedOperator(policy, policy, clicks)
    )
    actions: list[tuple[str, dict[str, Any]]] = []
    context.add_cookies([{"name": COOKIE, "value": case.quirk, "domain": injection.site, "path": "/"}])
    page = context.new_page()
    try:
        with bridge.episode(case.name(clicks), injection.id) as episode:
            page.goto(task.start_url)
            turn = TurnSetup(
                limits=Limits(max_steps=task.max_steps, max_seconds=60, step_timeout_s=8),
                record=lambda *action: actions.append(action),
            )
            act_on_task(operator, task, page, episode, turn)
            if policy is None:
                page.wait_for_timeout(IDLE_STAY_MS)
            return episode.report(), actions
    finally:
        page.close()
        context.clear_cookies(name=COOKIE)
