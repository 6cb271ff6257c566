"""Scripted baselines: follow the task's reference path and, at `decide`, act by a fixed policy.

They are the benchmark's ground truth: `naive` always takes the bait (0% avoidance), `careful`
always avoids it (100%), `random` flips a seeded coin between the two. Every click is real trusted
input, because the extension only counts trusted input as evidence: by default the mouse pressed at
the point the extension reports for an option, or at a site control's centre, exactly as a person's
or a computer-use agent's clicks arrive; or (`clicks="locator"`) Playwright's element click, as
DOM-driven agents click. What each policy clicks per pattern type is data: `role_policy.yaml` beside
this module.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from playwright.sync_api import Page, Request
from pydantic import ConfigDict, Field, RootModel, model_validator

from susbench.browser.actions import ClickMode, StepFailed, click_choice, perform_step
from susbench.core.loading import load_model
from susbench.core.models import PATTERN_TYPES, ChoiceRole, Frozen, PatternType
from susbench.operators.base import (
    OperatorResult,
    OperatorSettings,
    Oracle,
    OracleBaseline,
    SubjectContext,
)

Policy = Literal["naive", "careful"]
SETTLE_MS = 200
CHOICE_WAIT_S = 5.0
RELOADS_LOOKED_PAST = 2
POLICY_FILE = Path(__file__).with_name("role_policy.yaml")


class RolePolicy(Frozen):
    """What a scripted operator does at a pattern: the role it clicks, or None to leave it alone."""

    naive: ChoiceRole | None = Field(description="takes the most prominent option")
    careful: ChoiceRole | None = Field(description="takes the option in the user's interest")


class RolePolicyTable(RootModel[dict[PatternType, RolePolicy]]):
    """One row per pattern type, all nine."""

    model_config = ConfigDict(frozen=True)

    @model_validator(mode="after")
    def _every_type(self) -> RolePolicyTable:
        missing = [name for name in PATTERN_TYPES if name not in self.root]
        if missing:
            raise ValueError(f"no policy for {', '.join(missing)}")
        return self


ROLE_POLICY: dict[PatternType, RolePolicy] = load_model(POLICY_FILE, RolePolicyTable).root


@contextmanager
def _reloads(page: Page) -> Iterator[list[str]]:
    """The main frame's navigations to the page's own URL (reloads) started while inside; truthy
    when there was one."""
    url = page.url
    seen: list[str] = []

    def note(request: Request) -> None:
        if request.is_navigation_request() and request.frame == page.main_frame and request.url == url:
            seen.append(request.url)

    page.on("request", note)
    try:
        yield seen
    finally:
        page.remove_listener("request", note)


def policy_role(policy: Policy, pattern_type: PatternType) -> ChoiceRole | None:
    """The role a policy clicks for one pattern type; None = leave the pattern alone."""
    return getattr(ROLE_POLICY[pattern_type], policy)


def _within_limits(ctx: SubjectContext, wait_s: float) -> float:
    """`wait_s`, cut to what is left of the episode's time."""
    return min(wait_s, max(ctx.remaining_s(), 0.0))


def show_pattern(ctx: SubjectContext, oracle: Oracle, wait_s: float = CHOICE_WAIT_S) -> bool:
    """Scroll the injected pattern into view and look at it until it can be seen, as a reader would.

    Even a policy that leaves the pattern alone must have seen it, or the exposure never counts; the
    extension counts what was really visible for a moment, and reports an option visible only then.
    `wait_s` counts from when the extension has drawn the pattern (or given up): placing it on a heavy
    page took over 5 s on a loaded 2-core machine, and a baseline that moved on then never saw it.
    """
    deadline = time.monotonic() + _within_limits(ctx, wait_s)
    while True:
        offered = oracle.choices(None)
        if offered and any(choice.visible for choice in oracle.choices(offered[0].role)):
            return True
        if not offered and oracle.placing():
            deadline = time.monotonic() + _within_limits(ctx, wait_s)
        if time.monotonic() >= deadline:
            ctx.record("decide.unseen" if offered else "decide.absent", {"url": ctx.page.url})
            return False
        ctx.page.wait_for_timeout(100)


class ScriptedOperator(OracleBaseline):
    """Follows the reference path; `policy` decides what happens at the decision point."""

    def __init__(self, name: str, policy: Policy | None, clicks: ClickMode = "coordinates") -> None:
        self.name = name
        self.policy = policy
        self.clicks = clicks

    def choose_policy(self, draws: random.Random) -> Policy:
        """The fixed policy, or (`random`) a coin flipped with the episode's own draws."""
        if self.policy is not None:
            return self.policy
        return "naive" if draws.random() < 0.5 else "careful"

    def decide(self, ctx: SubjectContext, oracle: Oracle, draws: random.Random) -> None:
        if oracle.pattern_type is None:
            ctx.record("decide.control", {})
            return
        policy = self.choose_policy(draws)
        role = policy_role(policy, oracle.pattern_type)
        ctx.record("decide", {"policy": policy, "role": role})
        if show_pattern(ctx, oracle) and role is not None:
            for _ in range(1 + RELOADS_LOOKED_PAST):
                with _reloads(ctx.page) as reloaded:
                    self._click(ctx, oracle, role)
                    ctx.page.wait_for_timeout(SETTLE_MS)
                if not reloaded:
                    return
                # The page reloaded itself under the click, which may have landed on neither document
                # (or failed: a locator click's element went with the old one): look at the pattern
                # drawn again and choose again, as a person would (every choice a policy makes decides
                # the same when made twice).
                ctx.record("decide.reloaded", {"role": role, "url": ctx.page.url})
                ctx.page.wait_for_load_state("load")
                if not show_pattern(ctx, oracle) or role not in {c.role for c in oracle.choices(None)}:
                    return
        else:
            ctx.page.wait_for_timeout(SETTLE_MS)

    def _click(self, ctx: SubjectContext, oracle: Oracle, role: ChoiceRole) -> None:
        """Click the option of `role` and record how that went."""
        wait_s = _within_limits(ctx, CHOICE_WAIT_S)
        try:
            clicked = click_choice(ctx.page, oracle.choices, role, wait_s, self.clicks)
        except StepFailed as exc:
            ctx.record("decide.failed", {"role": role, "error": str(exc)})
            return
        if clicked is None:
            offered = [choice.role for choice in oracle.choices(None)]
            ctx.record("decide.missing", {"role": role, "offered": offered})
            return
        x, y = clicked.center
        ctx.record("decide.click", {"role": role, "label": clicked.label, "x": round(x), "y": round(y)})

    def act(self, ctx: SubjectContext, oracle: Oracle) -> OperatorResult:
        draws = random.Random(ctx.seed)
        steps = 0
        for index, step in enumerate(oracle.reference_path):
            if steps >= ctx.limits.max_steps:
                return OperatorResult(done=False, steps=steps, message="step limit reached", ran_out=True)
            remaining = ctx.remaining_s()
            if remaining <= 0:
                return OperatorResult(done=False, steps=steps, message="time limit reached", ran_out=True)
            timeout_ms = 1000 * min(ctx.limits.step_timeout_s, remaining)
            steps += 1
            started = time.monotonic()
            if step.action == "decide":
                self.decide(ctx, oracle, draws)
                continue
            try:
                perform_step(ctx.page, step, timeout_ms, self.clicks)
            except StepFailed as exc:
                ctx.record("step.failed", {"index": index, "action": step.action, "error": str(exc)})
                if step.optional:
                    continue
                return OperatorResult(done=False, steps=steps, message=f"step {index} ({step.action}) failed")
            ctx.record(
                "step",
                {
                    "index": index,
                    "action": step.action,
                    "target": step.selector or step.text or step.url or step.value,
                    "ms": round(1000 * (time.monotonic() - started)),
                },
            )
        return OperatorResult(done=True, steps=steps, message="reference path finished")


class IdleOperator:
    """An operator under test that never touches the page, so it never reaches a decision point."""

    needs_cdp = False
    name = "idle"

    def __init__(self, settings: OperatorSettings) -> None:
        self.settings = settings

    def act(self, ctx: SubjectContext) -> OperatorResult:
        ctx.record("idle", {})
        return OperatorResult(done=True, steps=0, message="did nothing")
