"""`openai-chat`: any OpenAI-compatible chat-completions server (OpenAI, vLLM, llama.cpp's server,
Ollama, LM Studio), the airgapped path.

Observations go in as user messages (the image, when the observation has one, and the text);
actions come back as tool calls (`--action-format tools`) or as one JSON object in the reply
(`json`, with `response_format` json_schema for servers that constrain output). A reply with neither
a tool call nor a readable action is the model's final message.
"""

from __future__ import annotations

import json
import re
from string import Template
from typing import Any, Literal

import openai
from pydantic import Field

from susbench.agents.actions import (
    ActionRefused,
    ActionSpace,
    action_schema,
    offered_actions,
    parameters_schema,
    parse_action,
)
from susbench.agents.harness import PROMPTS_DIR, AgentOperator, Conversation, Feedback, Proposal, Turn, prompt
from susbench.agents.observe import Observation, data_url
from susbench.agents.settings import AgentConfig
from susbench.core.errors import SusbenchError
from susbench.core.loading import read_data_file
from susbench.operators.base import ActionFormat, ObservationKind

OMITTED_IMAGE = "(an earlier screenshot, omitted)"
OMITTED_TEXT = "(an earlier observation, omitted)"
JSON_BLOCK = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


class ChatConfig(AgentConfig):
    model: str = "gpt-4o"
    api_key_env: str = "OPENAI_API_KEY"
    observation: ObservationKind = "som"
    action_format: ActionFormat = "tools"
    json_schema: bool = Field(default=True, description="json format: constrain replies with response_format")
    vision: bool = Field(default=True, description="the model reads images; false: text observations only")
    keep_observations: int = Field(default=1, ge=1, description="newest text observations kept in full")
    seed: int | None = Field(default=None, description="sampling seed sent with every request")
    action_space: ActionSpace = Field(
        default="full",
        description="elements: only click and type by element number, scroll, back and done - no "
        "coordinates, buttons or held keys to fill in (a text-only small model)",
    )
    element_by: Literal["number", "line"] = Field(
        default="number",
        description="json under json_schema: an action names its element by number, or by the element's "
        "whole listed line (a small model then matches the task's words to the element's)",
    )
    restate_task: bool = Field(
        default=False, description="repeat the task under every observation (a small context loses it)"
    )
    served_by: dict[str, str | int | float] | None = Field(
        default=None,
        description="the local server's identity (model file sha256, runtime, seed, threads, sampling): "
        "part of the run's identity, written by `susbench agents serve-local`",
    )


def chat_tools(space: ActionSpace = "full") -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": (model.__doc__ or name).strip(),
                "parameters": parameters_schema(model, fields),
            },
        }
        for name, (model, fields) in offered_actions(space).items()
    ]


def system_prompt(config: ChatConfig, observation: Observation) -> str:
    if config.system_prompt:
        return config.system_prompt
    descriptions = read_data_file(PROMPTS_DIR / "observations.yaml")
    formats = read_data_file(PROMPTS_DIR / "formats.yaml")
    assert isinstance(descriptions, dict) and isinstance(formats, dict)
    offered = offered_actions(config.action_space)
    actions = "\n".join(
        f"- {name}: {(model.__doc__ or '').strip()} Fields: "
        + (", ".join(parameters_schema(model, fields)["properties"]) or "none")
        for name, (model, fields) in offered.items()
    )
    element = formats["element"][config.element_by]
    examples = [
        Template(example).substitute(element=element)
        for example in formats["examples"]
        if _offers(offered, json.loads(Template(example).substitute(element="0")))
    ]
    return Template(prompt("chat.txt")).substitute(
        observation=descriptions[config.observation],
        format=Template(formats[config.action_format]).substitute(
            actions=actions, examples=", ".join(examples[:-1]) + " or " + examples[-1]
        ),
        width=observation.viewport.width,
        height=observation.viewport.height,
    )


def _offers(offered: dict[str, tuple[type[Any], tuple[str, ...] | None]], example: dict[str, Any]) -> bool:
    """Whether an example action uses only actions and fields the model is offered."""
    name = example["action"]
    if name not in offered:
        return False
    fields = offered[name][1]
    return fields is None or set(example) - {"action"} <= set(fields)


def read_json_action(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """An action object written in a reply's text: (the object, None), (None, why it is unreadable)
    when the text tries to be JSON and fails, or (None, None) when it is plain words."""
    fenced = JSON_BLOCK.search(text)
    candidate = fenced.group(1) if fenced else text.strip()
    if not candidate.startswith("{"):
        start = candidate.find("{")
        if start < 0:
            return None, None
        candidate = candidate[start : candidate.rfind("}") + 1]
    try:
        data = json.loads(candidate)
    except json.JSONDecodeError as exc:
        return None, f"malformed JSON action ({exc.msg} at character {exc.pos}); reply with one JSON object"
    if not isinstance(data, dict) or "action" not in data:
        return None, 'a JSON action needs an "action" field, e.g. {"action": "click", "element": 3}'
    return data, None


class ChatConversation(Conversation):
    def __init__(self, operator: OpenAIChatOperator, instruction: str, first: Observation) -> None:
        self.operator = operator
        self.config = operator.config
        self.instruction = instruction
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": system_prompt(self.config, first)},
            {"role": "user", "content": f"Task: {instruction}"},
        ]
        self.pending: list[dict[str, Any]] = []
        self.schema_refused = False
        self.elements = first.listed

    def prepare(self, observation: Observation, feedback: list[Feedback]) -> None:
        pending: list[dict[str, Any]] = []
        notes = []
        for item in feedback:
            message = "ok" if item.ok else f"error: {item.message}"
            if item.call_id is not None:
                pending.append({"role": "tool", "tool_call_id": item.call_id, "content": message})
            else:
                notes.append(f"Your last action: {message}")
        restated = [f"Task: {self.instruction}"] if self.config.restate_task else []
        text = "\n".join([*notes, observation.text, *restated])
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if observation.image is not None and self.config.vision:
            content.append({"type": "image_url", "image_url": {"url": data_url(observation.image)}})
        pending.append({"role": "user", "content": content, "observation": True})
        self.pending = pending
        self.elements = observation.listed

    def _request_messages(self) -> list[dict[str, Any]]:
        """History plus the pending messages, older observations cut down to the configured number."""
        messages = [*self.messages, *self.pending]
        observed = [index for index, message in enumerate(messages) if message.get("observation")]
        keep_images = set(observed[-self.config.keep_images :])
        keep_texts = set(observed[-self.config.keep_observations :])
        shaped = []
        for index, message in enumerate(messages):
            if not message.get("observation"):
                shaped.append(message)
                continue
            parts = []
            for part in message["content"]:
                if part["type"] == "image_url" and index not in keep_images:
                    parts.append({"type": "text", "text": OMITTED_IMAGE})
                elif part["type"] == "text" and index not in keep_texts:
                    parts.append({"type": "text", "text": OMITTED_TEXT})
                else:
                    parts.append(part)
            shaped.append({"role": "user", "content": parts})
        return shaped

    def send(self, timeout_s: float) -> Any:
        request: dict[str, Any] = {
            "model": self.config.model,
            "messages": self._request_messages(),
            "max_tokens": self.config.max_tokens,
            "timeout": timeout_s,
        }
        if self.config.temperature is not None:
            request["temperature"] = self.config.temperature
        if self.config.seed is not None:
            request["seed"] = self.config.seed
        if self.config.action_format == "tools":
            request["tools"] = chat_tools(self.config.action_space)
            request["tool_choice"] = "auto"
        elif self.config.json_schema and not self.schema_refused:
            constrained = {
                **request,
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "browser_action", "schema": self._schema()},
                },
            }
            try:
                return self.operator.client.chat.completions.with_raw_response.create(**constrained)
            except openai.BadRequestError as exc:
                if "response_format" not in str(exc) and "json_schema" not in str(exc):
                    raise
                # A server without structured outputs: the system prompt already asks for JSON.
                self.schema_refused = True
        return self.operator.client.chat.completions.with_raw_response.create(**request)

    def _schema(self) -> dict[str, Any]:
        """The action schema for the latest observation: its elements by number or by listed line."""
        lines = [element.line() for element in self.elements.values()]
        return action_schema(
            list(self.elements), self.config.action_space, lines if self.config.element_by == "line" else None
        )

    def accept(self, reply: Any) -> Turn:
        self.messages.extend(self.pending)
        self.pending = []
        choice = reply.choices[0]
        message = choice.message
        text = message.content or ""
        calls = list(message.tool_calls or [])
        assistant: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            assistant["tool_calls"] = [call.model_dump(mode="json", exclude_none=True) for call in calls]
        self.messages.append(assistant)
        usage = reply.usage
        tokens_in = usage.prompt_tokens if usage else 0
        tokens_out = usage.completion_tokens if usage else 0
        proposals = [self._from_tool_call(call) for call in calls]
        final = None
        if not proposals:
            data, problem = read_json_action(text)
            if data is not None:
                proposals = [self._proposal(None, data)]
            elif problem is not None:
                proposals = [Proposal(None, None, problem)]
            else:
                final = text
        return Turn(text=text, proposals=proposals, final=final, tokens_in=tokens_in, tokens_out=tokens_out)

    def _from_tool_call(self, call: Any) -> Proposal:
        name = call.function.name
        offered = offered_actions(self.config.action_space)
        if name not in offered:
            return Proposal(call.id, None, f"unknown tool {name!r}; the tools are: {', '.join(offered)}")
        try:
            arguments = json.loads(call.function.arguments or "{}")
        except json.JSONDecodeError as exc:
            return Proposal(call.id, None, f"malformed JSON arguments for {name} ({exc.msg})")
        if not isinstance(arguments, dict):
            return Proposal(call.id, None, f"the arguments of {name} must be a JSON object")
        return self._proposal(call.id, {**arguments, "action": name})

    def _proposal(self, call_id: str | None, data: dict[str, Any]) -> Proposal:
        try:
            return Proposal(call_id, parse_action(data, self.config.action_space))
        except ActionRefused as exc:
            return Proposal(call_id, None, str(exc))


def openai_client(config: AgentConfig, key: str) -> openai.OpenAI:
    return openai.OpenAI(api_key=key, base_url=config.base_url, max_retries=0, timeout=config.timeout_s)


class OpenAIChatOperator(AgentOperator[ChatConfig]):
    name = "openai-chat"
    config_model = ChatConfig
    connection_errors = (openai.APIConnectionError,)

    def make_client(self, key: str) -> openai.OpenAI:
        return openai_client(self.config, key)

    def check(self) -> None:
        if not self.config.vision and self.config.observation != "axtree":
            raise SusbenchError(
                f"--observation {self.config.observation}: a model without vision (vision: false) "
                "needs --observation axtree"
            )

    def conversation(self, instruction: str, observation: Observation) -> Conversation:
        return ChatConversation(self, instruction, observation)
