"""The agent loop every vendor shares: observe, ask the model, act, record; until done or out of limits.

A vendor module supplies a `Conversation` (how observations and action results go into its wire
protocol, and how replies come back as proposed actions); the harness owns everything else, so the
boundary is the same for all of them: the model gets the task's instruction and observations, and
nothing else. Refused or malformed actions go back to the model as errors and are counted; a
reply that asks for no action ends the episode with that reply as the final message; a model
server that stays down ends it as `error`, with the steps so far kept.
"""

from __future__ import annotations

import hashlib
import os
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from susbench.agents.actions import ActionRefused, AgentAction, Done
from susbench.agents.calls import Answer, ModelCaller, ModelUnavailable
from susbench.agents.execute import Executor
from susbench.agents.observe import Observation, Observer
from susbench.agents.pricing import Price, cost_usd, load_prices
from susbench.agents.settings import AgentConfig, api_key, resolve_config
from susbench.agents.window import BrowserWindow
from susbench.core.errors import SusbenchError
from susbench.operators.base import (
    BudgetEnded,
    ObservationKind,
    OperatorResult,
    OperatorSettings,
    SubjectContext,
)
from susbench.records.trace import StepRecord

ConfigT = TypeVar("ConfigT", bound=AgentConfig)
PROMPTS_DIR = Path(__file__).with_name("prompts")
SKIPPED = "not carried out: an earlier action of this turn failed"


def prompt(name: str) -> str:
    """A built-in prompt (data, beside the code)."""
    return (PROMPTS_DIR / name).read_text(encoding="utf-8").strip()


@dataclass(frozen=True)
class Proposal:
    """One action a model asked for: parsed, or refused before it ran (`error`)."""

    call_id: str | None
    action: AgentAction | None
    error: str | None = None


@dataclass(frozen=True)
class Turn:
    """A model's reply: its words, the actions it proposed, or (no action) its final message.

    `stop` says why the harness must end the episode now (a safety check the policy does not
    acknowledge), without carrying out the actions.
    """

    text: str
    proposals: list[Proposal]
    final: str | None
    tokens_in: int
    tokens_out: int
    stop: str | None = None


@dataclass(frozen=True)
class Feedback:
    """What became of one proposed action, told to the model with the next observation."""

    call_id: str | None
    ok: bool
    message: str


class BudgetSpent(BudgetEnded):
    """The episode used up its model turns or tokens without finishing: stored as `error`, since a
    model that loops has not decided anything."""


class Conversation(ABC):
    """One episode's exchange with a model in one vendor's wire protocol."""

    @abstractmethod
    def prepare(self, observation: Observation, feedback: list[Feedback]) -> None:
        """Build the next request from the new observation and the results of the last actions."""

    @abstractmethod
    def send(self, timeout_s: float) -> Any:
        """Send the prepared request; returns the SDK's raw-response wrapper (retried by the caller)."""

    @abstractmethod
    def accept(self, reply: Any) -> Turn:
        """Take the parsed reply into the conversation and read the actions it proposes."""


def endpoint_source(base_url: str | None, variable: str, sdk: str) -> str:
    if base_url is not None:
        return "from --base-url or the operator config's base_url"
    if os.environ.get(variable):
        return f"from ${variable}"
    return f"the {sdk} SDK's default: no --base-url given and ${variable} unset"


class AgentOperator(ABC, Generic[ConfigT]):
    """An operator under test driven by a model: the shared loop; vendors add the conversation."""

    name: ClassVar[str]
    config_model: ClassVar[type[AgentConfig]]
    connection_errors: ClassVar[tuple[type[Exception], ...]]
    """The SDK's exceptions for timeouts and lost connections (retried)."""
    observations: ClassVar[tuple[ObservationKind, ...]] = ("screenshot", "som", "axtree")
    sdk: ClassVar[str] = "openai"
    base_url_env: ClassVar[str] = "OPENAI_BASE_URL"
    """The variable the vendor's SDK reads its server from when no base_url is given."""
    needs_cdp = False

    def __init__(self, settings: OperatorSettings) -> None:
        self.config: ConfigT = resolve_config(self.name, self.config_model, settings)  # type: ignore[assignment]
        if self.config.observation not in self.observations:
            raise SusbenchError(
                f"--observation {self.config.observation}: operator {self.name!r} sees "
                f"{' or '.join(self.observations)} only"
            )
        self.price: Price | None = self.config.price or load_prices().price(self.config.model)
        if self.config.compact and self.config.observation != "axtree":
            raise SusbenchError(
                f"compact: true shortens the axtree observation, not {self.config.observation}"
            )
        self.check()
        self.client = self.make_client(api_key(self.name, self.config))

    def check(self) -> None:
        """Refuse settings this operator cannot honour (the base checks the observation kind)."""

    @abstractmethod
    def make_client(self, key: str) -> Any:
        """The vendor SDK's client, with its own retries off (the harness retries and records them)."""

    @property
    def server(self) -> str:
        """The model server's address, for error messages."""
        return str(self.client.base_url)

    @property
    def endpoint(self) -> str:
        """The server this operator calls and where its address came from."""
        return f"{self.server} ({endpoint_source(self.config.base_url, self.base_url_env, self.sdk)})"

    @abstractmethod
    def conversation(self, instruction: str, observation: Observation) -> Conversation:
        """A new conversation for one episode, given its instruction and first observation."""

    def act(self, ctx: SubjectContext) -> OperatorResult:
        window = BrowserWindow(ctx.page)
        try:
            return self._loop(ctx, window)
        finally:
            window.close()

    def _loop(self, ctx: SubjectContext, window: BrowserWindow) -> OperatorResult:
        observer = Observer(window, self.config.observation, compact=self.config.compact)
        executor = Executor(window, ctx.limits.step_timeout_s)
        caller = ModelCaller(self.config, self.server, self.connection_errors)
        max_steps = self.config.max_steps or ctx.limits.max_steps
        feedback: list[Feedback] = []
        conversation: Conversation | None = None
        spent = 0
        for index in range(max_steps):
            if ctx.remaining_s() <= 0:
                return OperatorResult(done=False, steps=index, message="time limit reached")
            observation = observer.observe()
            conversation = conversation or self.conversation(ctx.instruction, observation)
            conversation.prepare(observation, feedback)
            try:
                answer = caller.call(conversation.send, ctx.remaining_s())
            except ModelUnavailable as exc:
                self._record(ctx, index, observation, None, None, [], [], 0.0, str(exc))
                raise
            turn = conversation.accept(answer.parsed)
            if turn.stop is not None:
                self._record(ctx, index, observation, answer, turn, [], [], 0.0, None)
                return OperatorResult(done=False, steps=index + 1, message=turn.stop)
            records, errors, feedback, act_ms, done = self._carry_out(executor, turn, observation)
            self._record(ctx, index, observation, answer, turn, records, errors, act_ms, None)
            if turn.final is not None:
                return OperatorResult(done=True, steps=index + 1, message=turn.final)
            if done is not None:
                return OperatorResult(done=True, steps=index + 1, message=done.answer)
            spent += turn.tokens_in + turn.tokens_out
            budget = self.config.max_episode_tokens
            if budget is not None and spent >= budget:
                raise BudgetSpent(
                    f"token budget spent: {spent} tokens in {index + 1} model turns (max_episode_tokens "
                    f"{budget}) without finishing"
                )
        raise BudgetSpent(f"step budget spent: {max_steps} model turns without finishing (max_steps)")

    def _carry_out(
        self, executor: Executor, turn: Turn, observation: Observation
    ) -> tuple[list[dict[str, Any]], list[str], list[Feedback], float, Done | None]:
        """Run the turn's actions in order; the first failure skips the rest of the turn."""
        records: list[dict[str, Any]] = []
        errors: list[str] = []
        feedback: list[Feedback] = []
        done: Done | None = None
        started = time.perf_counter()
        for proposal in turn.proposals:
            if errors:
                feedback.append(Feedback(proposal.call_id, False, SKIPPED))
                continue
            if proposal.action is None:
                errors.append(proposal.error or "unreadable action")
                feedback.append(Feedback(proposal.call_id, False, errors[-1]))
                continue
            if isinstance(proposal.action, Done):
                done = proposal.action
                records.append(proposal.action.model_dump(mode="json"))
                feedback.append(Feedback(proposal.call_id, True, "done"))
                continue
            try:
                records.append(executor.run(proposal.action, observation.elements))
                feedback.append(Feedback(proposal.call_id, True, "ok"))
            except ActionRefused as exc:
                errors.append(str(exc))
                feedback.append(Feedback(proposal.call_id, False, str(exc)))
        return records, errors, feedback, 1000 * (time.perf_counter() - started), done

    def _record(
        self,
        ctx: SubjectContext,
        index: int,
        observation: Observation,
        answer: Answer[Any] | None,
        turn: Turn | None,
        records: list[dict[str, Any]],
        errors: list[str],
        act_ms: float,
        error: str | None,
    ) -> None:
        image = observation.image or observation.screenshot
        name, digest = save_image(ctx.trace_dir, index, image)
        tokens_in, tokens_out = (turn.tokens_in, turn.tokens_out) if turn is not None else (0, 0)
        ctx.record_step(
            StepRecord(
                index=index,
                ts_ms=observation.taken_at_ms,
                observation=observation.kind,
                url=observation.url,
                title=observation.title,
                tabs=len(observation.tabs),
                screenshot=name,
                screenshot_sha256=digest,
                observation_text=observation.text,
                request_bytes=answer.request_bytes if answer else 0,
                model=self.config.model,
                reply=answer.raw_reply if answer else "",
                reply_text=turn.text if turn else "",
                actions=tuple(records),
                action_errors=tuple(errors),
                model_ms=answer.latency_ms if answer else 0.0,
                observe_ms=observation.observe_ms,
                act_ms=act_ms,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                cost_usd=cost_usd(self.price, tokens_in, tokens_out) if turn else None,
                retries=answer.retries if answer else 0,
                error=error,
            )
        )


def save_image(folder: Path | None, index: int, png: bytes) -> tuple[str | None, str]:
    """Write a step's image into the episode's trace folder; its file name and sha256."""
    digest = hashlib.sha256(png).hexdigest()
    if folder is None:
        return None, digest
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{index:03d}.png"
    (folder / name).write_bytes(png)
    return name, digest
