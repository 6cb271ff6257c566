"""The operator interface: whoever acts in the browser (script, person, LLM agent) behind one call.

The controller hands an operator an `OperatorContext` and waits for `act()` to return. The context
offers both ways into the browser, a Playwright page and a CDP endpoint, so an agent that brings its
own driver (Browser Use, a vendor computer-use loop) works as well as a Playwright script; the
controller never assumes which one is used.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from playwright.sync_api import Page
from pydantic import Field

from susbench.extension_bridge import Choice
from susbench.models import ChoiceRole, Frozen, PatternType, Task


class Limits(Frozen):
    """How far an operator may go: steps, wall time, and how long one step may wait."""

    max_steps: int = Field(ge=1)
    max_seconds: float = Field(gt=0)
    step_timeout_s: float = Field(default=15.0, gt=0)


@dataclass
class OperatorContext:
    """Everything an operator may use during one episode.

    `choices(scroll_to)` lists the injected pattern's options with viewport rects (empty when
    nothing is injected); `record(kind, detail)` stores an operator action as evidence.
    `pattern_type` is ground truth for the scripted baselines only: an operator under test (a
    person, an agent) must not be shown it, nor the choices' roles.
    """

    task: Task
    page: Page
    cdp_endpoint: str | None
    limits: Limits
    seed: int
    pattern_type: PatternType | None
    record: Callable[[str, dict[str, Any]], None]
    choices: Callable[[ChoiceRole | None], Sequence[Choice]]
    started: float = field(default_factory=time.monotonic)

    @property
    def instruction(self) -> str:
        return self.task.instruction

    def remaining_s(self) -> float:
        return self.limits.max_seconds - (time.monotonic() - self.started)


class OperatorResult(Frozen):
    """What an operator reports when it stops."""

    done: bool = Field(description="the operator believes the task is finished")
    steps: int = Field(default=0, ge=0)
    message: str = ""


class Operator(Protocol):
    """Acts in the browser until done or out of limits; must not close the page or browser."""

    name: str
    needs_cdp: bool

    def act(self, ctx: OperatorContext) -> OperatorResult: ...


OperatorFactory = Callable[[int], Operator]
