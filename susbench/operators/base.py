"""The operator interface: whoever acts in the browser (script, person, LLM agent) behind one call.

An operator under test gets a `SubjectContext`: the task instruction, the browser (a Playwright
page and, when it asks, a CDP endpoint for agents that bring their own driver), its limits, a
`record` callback, and a folder and a callback for its step-by-step trace; what a person at the
keyboard has, nothing more, and the episode's seed. How it was configured (`OperatorSettings`: model,
server, observation kind, ...) reaches its factory, which a worker calls once for all its episodes.
The ground truth (pattern type, the injected options with their roles, the reference path) is an
`Oracle`, a separate object that the controller hands only to the built-in scripted baselines
(`OracleBaseline`), never to an operator under test.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import Field

from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen, PatternType, Step
from susbench.records.trace import StepRecord

if TYPE_CHECKING:  # Playwright is not loaded to read the settings (`susbench run --help`)
    from playwright.sync_api import Page

    from susbench.browser.actions import ChoiceLister

ObservationKind = Literal["screenshot", "som", "axtree"]
ActionFormat = Literal["tools", "json"]


class Limits(Frozen):
    """How far an operator may go: steps, wall time, and how long one step may wait."""

    max_steps: int = Field(ge=1)
    max_seconds: float = Field(gt=0)
    step_timeout_s: float = Field(default=15.0, gt=0)


class OperatorSettings(Frozen):
    """How `susbench run` configured the operator, beyond its name (`--model`, `--base-url`, ...).

    Sent to every worker and part of the run's identity, so it never holds a secret: API keys stay
    in the environment. `config` is the parsed `--operator-config` file, checked by the operator
    itself with errors naming `config_source` and the field.
    """

    model: str | None = Field(default=None, description="agents: the model to ask")
    base_url: str | None = Field(
        default=None, description="agents: the SDK's base URL (OpenAI-style: .../v1; Anthropic: the host)"
    )
    observation: ObservationKind | None = Field(
        default=None, description="agents: screenshot, som (marked screenshot + list), axtree"
    )
    max_steps: int | None = Field(default=None, ge=1, description="agents: model turns per episode")
    action_format: ActionFormat | None = Field(
        default=None, description="openai-chat: actions as tool calls, or as JSON in the reply"
    )
    config: dict[str, Any] = Field(default_factory=dict)
    config_source: str = "--operator-config"

    def given(self) -> list[str]:
        """The command-line names of the settings that were set."""
        names = ("model", "base_url", "observation", "max_steps", "action_format")
        flags = [f"--{name.replace('_', '-')}" for name in names if getattr(self, name) is not None]
        return flags + (["--operator-config"] if self.config else [])


@dataclass(frozen=True)
class SubjectContext:
    """Everything an operator under test may use during one episode.

    `record(kind, detail)` stores one of its actions as evidence; `record_step` stores one step of
    its trace (an agent's observation, model reply and actions), whose files go in `trace_dir`.
    `marks(url, request)` numbers the elements inside the injected pattern for a harness whose own
    marking cannot enter its closed shadow root (`ExtensionBridge.marks`: ids and boxes, no roles).
    `seed` is the episode's: an operator that draws at random draws from it, so a re-run draws alike.
    """

    instruction: str
    page: Page
    cdp_endpoint: str | None
    limits: Limits
    record: Callable[[str, dict[str, Any]], None]
    trace_dir: Path | None = None
    record_step: Callable[[StepRecord], None] = field(default=lambda step: None)
    marks: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None
    episode_id: str = ""
    seed: int = 0
    completed: Callable[[], bool | None] = field(default=lambda: None)
    started: float = field(default_factory=time.monotonic)

    def remaining_s(self) -> float:
        return self.limits.max_seconds - (time.monotonic() - self.started)


@dataclass(frozen=True)
class Oracle:
    """Ground truth for the scripted baselines: never shown to an operator under test.

    `choices(scroll_to)` lists the injected pattern's options with their roles and viewport rects
    (empty when nothing is injected), first bringing the pattern into view when it has an option of
    that role (the same scroll whichever role: how a baseline scrolls never shows its choice).
    `placing()` is true while the extension is still placing the pattern on a page it matched
    (`ExtensionEpisode.placing`), so a baseline waits for a pattern that is coming.
    """

    pattern_type: PatternType | None
    reference_path: tuple[Step, ...]
    choices: ChoiceLister
    placing: Callable[[], bool]


class OperatorResult(Frozen):
    """What an operator reports when it stops."""

    done: bool = Field(description="the operator believes the task is finished")
    steps: int = Field(default=0, ge=0)
    message: str = ""
    ran_out: bool = Field(default=False, description="it stopped because its step or time budget ended")


class BudgetEnded(SusbenchError):
    """An operator under test stopped by its step, token or time budget (raised): the episode is an
    `error` unless the pattern was decided before, and then it was decided otherwise than by the budget."""


class Operator(Protocol):
    """An operator under test: acts in the browser until done or out of limits; must not close the
    page or the browser."""

    name: str
    needs_cdp: bool

    def act(self, ctx: SubjectContext) -> OperatorResult: ...


@runtime_checkable
class Calling(Protocol):
    """An operator that calls a model server: `endpoint` says which, and where that address came from
    (so a run never goes to a vendor's default server unannounced)."""

    @property
    def endpoint(self) -> str: ...


@runtime_checkable
class Seated(Protocol):
    """An operator with a person at the screen: the episode's browser is headed, and its window goes
    where the person's screen layout puts it (beside the controls that live outside the page)."""

    def window_args(self) -> tuple[str, ...]: ...


class OracleBaseline(ABC):
    """A built-in scripted baseline, the only kind of operator the controller gives the oracle."""

    name: str
    needs_cdp = False

    @abstractmethod
    def act(self, ctx: SubjectContext, oracle: Oracle) -> OperatorResult: ...


OperatorFactory = Callable[[OperatorSettings], Operator]
"""Makes the operator from the run's operator settings, once per worker: it acts in every episode the
worker runs (each episode's seed comes in its `SubjectContext`)."""
