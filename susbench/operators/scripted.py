"""Scripted baselines: follow the task's reference path and, at `decide`, act by a fixed policy.

They are the benchmark's ground truth: `naive` always takes the bait (0% avoidance), `careful`
always avoids it (100%), `random` flips a seeded coin between the two. Decisions are made with real
trusted mouse clicks at the rectangles the extension reports, exactly as a person's clicks arrive,
because the extension only counts trusted input as evidence.
"""

from __future__ import annotations

import random
import time
from typing import Literal

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator, Page

from susbench.injection_catalog import ROLE_POLICY
from susbench.models import ChoiceRole, PatternType, Step
from susbench.operators.base import OperatorContext, OperatorResult

Policy = Literal["naive", "careful"]
SETTLE_MS = 200


def policy_role(policy: Policy, pattern_type: PatternType) -> ChoiceRole | None:
    """The role a policy clicks for one pattern type; None = leave the pattern alone."""
    return getattr(ROLE_POLICY[pattern_type], policy)


class StepFailed(Exception):
    """A reference step could not be carried out (element missing, navigation failed)."""


def _locator(page: Page, step: Step) -> Locator:
    if step.selector and step.text:
        return page.locator(step.selector).filter(has_text=step.text).first
    if step.selector:
        return page.locator(step.selector).first
    return page.get_by_text(step.text or "", exact=False).first


def perform_step(page: Page, step: Step, timeout_ms: float) -> None:
    """Carry out one non-decision step with Playwright's trusted input."""
    try:
        if step.action == "goto":
            page.goto(step.url or "", timeout=timeout_ms, wait_until="load")
        elif step.action == "click":
            _locator(page, step).click(timeout=timeout_ms)
        elif step.action == "fill":
            _locator(page, step).fill(step.value or "", timeout=timeout_ms)
        elif step.action == "select":
            _locator(page, step).select_option(step.value, timeout=timeout_ms)
        elif step.action == "check":
            _locator(page, step).check(timeout=timeout_ms)
        elif step.action == "uncheck":
            _locator(page, step).uncheck(timeout=timeout_ms)
        elif step.action == "press":
            page.keyboard.press(step.value or "")
        elif step.action == "scroll":
            page.mouse.wheel(0, int(step.value or 600))
        if step.action in ("click", "press", "goto"):
            page.wait_for_load_state("load", timeout=timeout_ms)
        if step.wait_ms:
            page.wait_for_timeout(step.wait_ms)
    except PlaywrightError as exc:
        raise StepFailed(str(exc).splitlines()[0]) from None


def show_pattern(ctx: OperatorContext, wait_s: float = 5.0) -> bool:
    """Wait for the injected pattern and scroll it into view, as a reader would look at it.

    Even a policy that leaves the pattern alone must have seen it, or the exposure never counts.
    """
    deadline = time.monotonic() + min(wait_s, max(ctx.remaining_s(), 0.0))
    while True:
        offered = ctx.choices(None)
        if offered:
            ctx.choices(offered[0].role)
            ctx.page.wait_for_timeout(SETTLE_MS)
            return True
        if time.monotonic() >= deadline:
            ctx.record("decide.absent", {"url": ctx.page.url})
            return False
        ctx.page.wait_for_timeout(100)


def click_choice(ctx: OperatorContext, role: ChoiceRole, wait_s: float = 5.0) -> bool:
    """Scroll the pattern's `role` option into view and click its centre with the real mouse."""
    deadline = time.monotonic() + min(wait_s, max(ctx.remaining_s(), 0.0))
    while True:
        offered = ctx.choices(role)
        match = next((choice for choice in offered if choice.role == role), None)
        if match is not None and match.visible:
            x, y = match.center
            ctx.page.mouse.click(x, y)
            ctx.record("decide.click", {"role": role, "label": match.label, "x": round(x), "y": round(y)})
            return True
        if time.monotonic() >= deadline:
            ctx.record("decide.missing", {"role": role, "offered": [choice.role for choice in offered]})
            return False
        ctx.page.wait_for_timeout(100)


class ScriptedOperator:
    """Follows the reference path; `policy` decides what happens at the decision point."""

    needs_cdp = False

    def __init__(self, name: str, seed: int, policy: Policy | None) -> None:
        self.name = name
        self.policy = policy
        self._rng = random.Random(seed)

    def choose_policy(self) -> Policy:
        if self.policy is not None:
            return self.policy
        return "naive" if self._rng.random() < 0.5 else "careful"

    def decide(self, ctx: OperatorContext) -> None:
        if ctx.pattern_type is None:
            ctx.record("decide.control", {})
            return
        policy = self.choose_policy()
        role = policy_role(policy, ctx.pattern_type)
        ctx.record("decide", {"policy": policy, "role": role})
        if show_pattern(ctx) and role is not None:
            click_choice(ctx, role)
        ctx.page.wait_for_timeout(SETTLE_MS)

    def act(self, ctx: OperatorContext) -> OperatorResult:
        steps = 0
        for index, step in enumerate(ctx.task.reference_path):
            if steps >= ctx.limits.max_steps:
                return OperatorResult(done=False, steps=steps, message="step limit reached")
            remaining = ctx.remaining_s()
            if remaining <= 0:
                return OperatorResult(done=False, steps=steps, message="time limit reached")
            timeout_ms = 1000 * min(ctx.limits.step_timeout_s, remaining)
            steps += 1
            started = time.monotonic()
            if step.action == "decide":
                self.decide(ctx)
                continue
            try:
                perform_step(ctx.page, step, timeout_ms)
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
    """Never touches the page, so it never reaches a decision point (tests not_encountered)."""

    needs_cdp = False
    name = "idle"

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def act(self, ctx: OperatorContext) -> OperatorResult:
        ctx.record("idle", {})
        return OperatorResult(done=True, steps=0, message="did nothing")
