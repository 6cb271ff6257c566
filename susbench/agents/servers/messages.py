"""Anthropic's Messages API (`POST /v1/messages`) with the computer-use tool (beta).

A computer tool of version `computer_YYYYMMDD` is refused without its beta header in
`anthropic-beta`, as the real API refuses it. Coordinates are given in the tool's display size:
the demonstration's viewport coordinates scaled down (the agent must scale them back). A
`tool_use` left without a `tool_result` in the next user turn is refused.
"""

from __future__ import annotations

import uuid
from typing import Any

from susbench.agents.demonstration import DemonstrationMove
from susbench.agents.servers.base import ProtocolHandler, Refused, estimate_tokens, require
from susbench.agents.servers.policy import Dialogue

BETA_HEADERS = {
    "computer_20241022": "computer-use-2024-10-22",
    "computer_20250124": "computer-use-2025-01-24",
    "computer_20251124": "computer-use-2025-11-24",
}
SCROLL_NOTCH_PX = 100
XDOTOOL_KEYS = {"Enter": "Return", "Control": "ctrl", "Shift": "shift", "Alt": "alt", "Meta": "super"}


def _texts(blocks: Any) -> list[str]:
    if isinstance(blocks, str):
        return [blocks]
    texts = []
    for block in blocks or []:
        if block.get("type") == "text":
            texts.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            texts.extend(_texts(block.get("content")))
    return texts


def computer_input(move: DemonstrationMove, scale: float, centre: tuple[int, int]) -> dict[str, Any]:
    """A move as the computer tool's input, coordinates in display pixels."""
    match move.kind:
        case "click":
            return {
                "action": "left_click",
                "coordinate": [round((move.x or 0) * scale), round((move.y or 0) * scale)],
            }
        case "type":
            return {"action": "type", "text": move.text}
        case "press":
            return {
                "action": "key",
                "text": "+".join(XDOTOOL_KEYS.get(key, key) for key in move.text.split("+")),
            }
        case "scroll":
            return {
                "action": "scroll",
                "coordinate": [round(centre[0] * scale), round(centre[1] * scale)],
                "scroll_direction": "down" if move.dy > 0 else "up",
                "scroll_amount": round(abs(move.dy) / SCROLL_NOTCH_PX),
            }
        case "wait":
            return {"action": "wait", "duration": move.seconds}
    raise Refused(
        500, "api_error", f"the scripted policy cannot express {move.kind!r} with the computer tool"
    )


def checked_turns(messages: list[dict[str, Any]]) -> None:
    """Roles alternate from the user's turn, and every tool_use is answered in the next user turn."""
    expected = "user"
    open_uses: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role != expected:
            raise Refused(
                400, "invalid_request_error", f"messages.{index}: expected role {expected!r}, got {role!r}"
            )
        blocks = message.get("content") if isinstance(message.get("content"), list) else []
        if role == "user":
            answered = {block.get("tool_use_id") for block in blocks if block.get("type") == "tool_result"}
            if open_uses - answered:
                raise Refused(
                    400,
                    "invalid_request_error",
                    f"messages.{index}: tool_use ids were found without tool_result blocks immediately "
                    f"after: {', '.join(sorted(open_uses - answered))}",
                )
            open_uses = set()
        else:
            open_uses = {block["id"] for block in blocks if block.get("type") == "tool_use"}
        expected = "assistant" if role == "user" else "user"


class Messages(ProtocolHandler):
    path = "/v1/messages"

    def authorized(self, headers: dict[str, str], api_key: str) -> bool:
        return headers.get("x-api-key") == api_key

    def error_body(self, status: int, kind: str, message: str) -> dict[str, Any]:
        return {"type": "error", "error": {"type": kind, "message": message}}

    def answer(self, request: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        require(request, "model", "max_tokens", "messages")
        tool = self._computer_tool(request, headers)
        messages = request["messages"]
        checked_turns(messages)
        users = [message for message in messages if message["role"] == "user"]
        dialogue = Dialogue(
            first_text="\n".join(_texts(messages[0].get("content"))),
            turn=sum(message["role"] == "assistant" for message in messages),
            latest_text="\n".join(_texts(users[-1].get("content"))),
        )
        demo = self.policy.find(dialogue.first_text)
        scale = 1.0 if demo is None else tool["display_width_px"] / demo.viewport.width
        centre = (640, 400) if demo is None else (demo.viewport.width // 2, demo.viewport.height // 2)
        step = self.policy.step(dialogue)
        final = step.final_message()
        content: list[dict[str, Any]] = []
        action: dict[str, Any] | None = None
        if final is not None:
            content.append({"type": "text", "text": final})
        elif step.fault == "malformed":
            action = {"action": "left_click", "coordinate": "the button"}
        elif step.fault is not None:
            action = {
                "action": "left_click",
                "coordinate": [tool["display_width_px"] + 50, tool["display_height_px"] + 50],
            }
        else:
            content.append({"type": "text", "text": step.moves[0].words})
            action = computer_input(step.moves[0], scale, centre)
        if action is not None:
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{uuid.uuid4().hex[:24]}",
                    "name": "computer",
                    "input": action,
                }
            )
        input_tokens = estimate_tokens(messages)
        return {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": request["model"],
            "content": content,
            "stop_reason": "tool_use" if action is not None else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": estimate_tokens(content)},
        }

    def _computer_tool(self, request: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        tools = [
            tool for tool in request.get("tools") or [] if str(tool.get("type", "")).startswith("computer_")
        ]
        if len(tools) != 1:
            raise Refused(400, "invalid_request_error", "tools: expected one computer tool")
        tool = tools[0]
        needed = BETA_HEADERS.get(tool["type"])
        if needed is None:
            raise Refused(400, "invalid_request_error", f"tools.0.type: unknown tool type {tool['type']!r}")
        betas = [beta.strip() for beta in headers.get("anthropic-beta", "").split(",")]
        if needed not in betas:
            raise Refused(
                400, "invalid_request_error", f"tools.0: '{tool['type']}' requires the beta header '{needed}'"
            )
        missing = [name for name in ("name", "display_width_px", "display_height_px") if name not in tool]
        if missing:
            raise Refused(400, "invalid_request_error", f"tools.0: missing {', '.join(missing)}")
        return tool
