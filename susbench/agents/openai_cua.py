"""`openai-cua`: OpenAI's computer-using agent loop on the Responses API.

Either tool: `computer_use_preview` (display size, environment `browser`; one action per call) or
the generally available `computer` (which may batch several `actions` in one call). Each
`computer_call` is carried out and answered with a `computer_call_output` holding a screenshot,
chained by `previous_response_id`; the page's URL, title and tabs (and any failed action) follow as
text. `pending_safety_checks` meet the configured policy: `acknowledge` (recorded in the trace, and
sent back as acknowledged) or `stop` (the episode ends there). A response with no `computer_call`
is the model's final message.
"""

from __future__ import annotations

from typing import Any, Literal

import openai
from pydantic import Field

from susbench.agents.actions import ActionRefused, AgentAction, parse_action
from susbench.agents.harness import AgentOperator, Conversation, Feedback, Proposal, Turn, prompt
from susbench.agents.observe import Observation, data_url
from susbench.agents.openai_chat import openai_client
from susbench.agents.settings import AgentConfig
from susbench.operators.base import ObservationKind

CUA_WAIT_S = 2.0
MOUSE_BUTTONS = {"left": "left", "right": "right", "wheel": "middle"}


class CUAConfig(AgentConfig):
    model: str = "computer-use-preview"
    api_key_env: str = "OPENAI_API_KEY"
    observation: ObservationKind = "screenshot"
    tool: Literal["computer_use_preview", "computer"] = "computer_use_preview"
    safety_checks: Literal["acknowledge", "stop"] = Field(
        default="acknowledge", description="what to do when the model reports pending safety checks"
    )
    truncation: Literal["auto", "disabled"] = "auto"
    reasoning_summary: Literal["auto", "concise", "detailed"] | None = "concise"


def cua_action(data: dict[str, Any]) -> AgentAction:
    """A Responses API computer action as an `AgentAction` (`ActionRefused` if it is not one)."""
    kind = data.get("type")
    held = tuple(data.get("keys") or ())
    match kind:
        case "click" if data.get("button") in ("back", "forward"):
            return parse_action({"action": data["button"]})
        case "click":
            button = MOUSE_BUTTONS.get(data.get("button", "left"), data.get("button"))
            return parse_action(
                {
                    "action": "click",
                    "x": data.get("x"),
                    "y": data.get("y"),
                    "button": button,
                    "modifiers": held,
                }
            )
        case "double_click":
            return parse_action({"action": "click", "x": data.get("x"), "y": data.get("y"), "clicks": 2})
        case "drag":
            return parse_action({"action": "drag", "path": data.get("path")})
        case "keypress":
            return parse_action({"action": "press", "keys": "+".join(data.get("keys") or [])})
        case "move":
            return parse_action({"action": "move", "x": data.get("x"), "y": data.get("y")})
        case "scroll":
            return parse_action(
                {
                    "action": "scroll",
                    "x": data.get("x"),
                    "y": data.get("y"),
                    "dx": data.get("scroll_x", 0),
                    "dy": data.get("scroll_y", 0),
                }
            )
        case "type":
            return parse_action({"action": "type", "text": data.get("text")})
        case "wait":
            return parse_action({"action": "wait", "seconds": CUA_WAIT_S})
        case "screenshot":
            return parse_action({"action": "screenshot"})
    raise ActionRefused(f"unknown computer action {kind!r}")


class CUAConversation(Conversation):
    def __init__(self, operator: OpenAICUAOperator, instruction: str, first: Observation) -> None:
        self.operator = operator
        self.config = operator.config
        self.instruction = instruction
        self.viewport = first.viewport
        self.previous: str | None = None
        self.calls: list[str] = []
        self.acknowledged: list[dict[str, Any]] = []
        self.input: list[dict[str, Any]] = []

    def tool(self) -> dict[str, Any]:
        if self.config.tool == "computer":
            return {"type": "computer"}
        return {
            "type": "computer_use_preview",
            "display_width": self.viewport.width,
            "display_height": self.viewport.height,
            "environment": "browser",
        }

    def prepare(self, observation: Observation, feedback: list[Feedback]) -> None:
        image = data_url(observation.screenshot)
        failures = [item.message for item in feedback if not item.ok]
        facts = "\n".join([*(f"The last action failed: {message}" for message in failures), observation.text])
        if self.previous is None:
            content = [
                {"type": "input_text", "text": self.instruction},
                {"type": "input_image", "image_url": image, "detail": "auto"},
                {"type": "input_text", "text": facts},
            ]
            self.input = [{"role": "user", "content": content}]
            return
        outputs: list[dict[str, Any]] = [
            {
                "type": "computer_call_output",
                "call_id": call_id,
                "output": {"type": "computer_screenshot", "image_url": image},
                "acknowledged_safety_checks": self.acknowledged,
            }
            for call_id in self.calls
        ]
        self.input = [*outputs, {"role": "user", "content": [{"type": "input_text", "text": facts}]}]

    def send(self, timeout_s: float) -> Any:
        request: dict[str, Any] = {
            "model": self.config.model,
            "input": self.input,
            "tools": [self.tool()],
            "truncation": self.config.truncation,
            "max_output_tokens": self.config.max_tokens,
            "timeout": timeout_s,
        }
        if self.previous is None:
            request["instructions"] = self.config.system_prompt or prompt("computer.txt")
        else:
            request["previous_response_id"] = self.previous
        if self.config.reasoning_summary is not None:
            request["reasoning"] = {"summary": self.config.reasoning_summary}
        if self.config.temperature is not None:
            request["temperature"] = self.config.temperature
        return self.operator.client.responses.with_raw_response.create(**request)

    def accept(self, reply: Any) -> Turn:
        self.previous = reply.id
        self.calls = []
        self.acknowledged = []
        words: list[str] = []
        proposals: list[Proposal] = []
        checks: list[dict[str, Any]] = []
        for item in reply.output:
            if item.type == "reasoning":
                words.extend(part.text for part in (item.summary or []))
            elif item.type == "message":
                words.extend(part.text for part in item.content if getattr(part, "text", None))
            elif item.type == "computer_call":
                self.calls.append(item.call_id)
                checks.extend(
                    check.model_dump(mode="json", exclude_none=True) for check in item.pending_safety_checks
                )
                batch = [item.action] if item.action is not None else list(item.actions or [])
                proposals.extend(self._proposal(item.call_id, action) for action in batch)
        usage = reply.usage
        tokens = (usage.input_tokens, usage.output_tokens) if usage else (0, 0)
        text = "\n".join(words)
        if checks:
            described = "; ".join(f"{check.get('code')}: {check.get('message')}" for check in checks)
            if self.config.safety_checks == "stop":
                stop = f"stopped at pending safety checks ({described})"
                return Turn(
                    text=text, proposals=[], final=None, tokens_in=tokens[0], tokens_out=tokens[1], stop=stop
                )
            self.acknowledged = checks
            text = f"{text}\n[safety checks acknowledged by policy: {described}]".strip()
        final = text if not self.calls else None
        return Turn(text=text, proposals=proposals, final=final, tokens_in=tokens[0], tokens_out=tokens[1])

    def _proposal(self, call_id: str, action: Any) -> Proposal:
        try:
            return Proposal(call_id, cua_action(action.model_dump(mode="json", exclude_none=True)))
        except ActionRefused as exc:
            return Proposal(call_id, None, str(exc))


class OpenAICUAOperator(AgentOperator[CUAConfig]):
    name = "openai-cua"
    config_model = CUAConfig
    observations = ("screenshot",)
    connection_errors = (openai.APIConnectionError,)

    def make_client(self, key: str) -> openai.OpenAI:
        return openai_client(self.config, key)

    def conversation(self, instruction: str, observation: Observation) -> Conversation:
        return CUAConversation(self, instruction, observation)
