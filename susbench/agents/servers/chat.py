"""OpenAI chat completions (`POST /v1/chat/completions`), with tools and `response_format`.

With `tools` in the request the scripted model answers with one tool call; without, with one JSON
action in the message content (as a server constrained by `response_format` json_schema does).
The final turn is a plain message with no tool call.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from susbench.agents.demonstration import DemonstrationMove
from susbench.agents.servers.base import ProtocolHandler, Refused, estimate_tokens, require
from susbench.agents.servers.browser_use_dialect import browser_use_reply, speaks_browser_use
from susbench.agents.servers.browsergym_dialect import browsergym_action, speaks_browsergym
from susbench.agents.servers.policy import OFFSCREEN, UNKNOWN_ELEMENT, Dialogue, element_number

MALFORMED_ARGUMENTS = '{"x": 12, "y":'


def chat_call(move: DemonstrationMove, latest_text: str) -> tuple[str, dict[str, Any]]:
    """A move as a chat action: tool name and arguments (an element number when the list has it)."""
    match move.kind:
        case "click":
            number = element_number(move, latest_text)
            return "click", {"element": number} if number is not None else {"x": move.x, "y": move.y}
        case "type":
            return "type", {"text": move.text}
        case "press":
            return "press", {"keys": move.text}
        case "scroll":
            return "scroll", {"dy": move.dy}
        case "goto":
            return "goto", {"url": move.url}
        case "wait":
            return "wait", {"seconds": move.seconds}
    return "done", {"answer": move.text}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def read_dialogue(messages: list[dict[str, Any]]) -> Dialogue:
    """The conversation so far: the user's opening text, the model's turns, the latest observation."""
    checked_tool_calls(messages)
    opening = []
    for message in messages:
        if message.get("role") == "assistant":
            break
        if message.get("role") == "user":
            opening.append(_text(message.get("content")))
    users = [message for message in messages if message.get("role") == "user"]
    return Dialogue(
        first_text="\n".join(opening),
        turn=sum(message.get("role") == "assistant" for message in messages),
        latest_text=_text(users[-1].get("content")) if users else "",
    )


def checked_tool_calls(messages: list[dict[str, Any]]) -> None:
    """Refuse, as the API does, tool calls left unanswered and tool messages that answer nothing."""
    open_calls: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            raise Refused(400, "invalid_request_error", f"messages[{index}].role: unknown role {role!r}")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_calls:
                raise Refused(
                    400,
                    "invalid_request_error",
                    f"messages[{index}]: a message with role 'tool' must answer a preceding 'tool_calls' id",
                )
            open_calls.discard(call_id)
            continue
        if open_calls:
            raise Refused(
                400,
                "invalid_request_error",
                "an assistant message with 'tool_calls' must be followed by tool messages responding to "
                f"each 'tool_call_id' (missing: {', '.join(sorted(open_calls))})",
            )
        if role == "assistant":
            open_calls = {call["id"] for call in message.get("tool_calls") or []}


class ChatCompletions(ProtocolHandler):
    path = "/v1/chat/completions"

    def authorized(self, headers: dict[str, str], api_key: str) -> bool:
        return headers.get("authorization") == f"Bearer {api_key}"

    def error_body(self, status: int, kind: str, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}

    def answer(self, request: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        require(request, "model", "messages")
        dialogue = read_dialogue(request["messages"])
        step = self.policy.step(dialogue)
        tools = bool(request.get("tools"))
        calls: list[tuple[str, str]] = []
        content: str | None = None
        if speaks_browser_use(request):
            calls, content = [], browser_use_reply(self.policy, request)
        elif speaks_browsergym(request):
            move = step.moves[0] if step.moves else None
            content = browsergym_action(move, dialogue.latest_text, step.final or "Done.")
        elif step.fault == "malformed":
            calls, content = ([("click", MALFORMED_ARGUMENTS)], None) if tools else ([], MALFORMED_ARGUMENTS)
        elif step.fault is not None:
            arguments = (
                {"element": UNKNOWN_ELEMENT}
                if step.fault == "unknown_element"
                else {"x": OFFSCREEN[0], "y": OFFSCREEN[1]}
            )
            calls = [("click", json.dumps(arguments))]
        elif not step.moves:
            content = step.final
        else:
            name, arguments = chat_call(step.moves[0], dialogue.latest_text)
            calls = [(name, json.dumps(arguments))]
            content = step.moves[0].words
        if calls and not tools:
            name, arguments = calls[0]
            content = (
                arguments
                if arguments == MALFORMED_ARGUMENTS
                else json.dumps({"action": name, **json.loads(arguments)})
            )
            calls = []
        message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{uuid.uuid4().hex[:24]}",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
                for name, arguments in calls
            ]
        return chat_completion(request, message, "tool_calls" if calls else "stop")


def chat_completion(request: dict[str, Any], message: dict[str, Any], finish_reason: str) -> dict[str, Any]:
    """A chat completion answering `request` with one assistant `message`, as the API shapes it."""
    completion_tokens = estimate_tokens(message)
    prompt_tokens = estimate_tokens(request["messages"])
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request["model"],
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
        "system_fingerprint": None,
    }
