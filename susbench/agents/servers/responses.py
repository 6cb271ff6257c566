"""OpenAI's Responses API (`POST /v1/responses`) with the computer-use tools.

`computer_use_preview` gets one `action` per `computer_call`; the generally available `computer`
tool gets a batch of `actions` (a scroll travels with the move after it). Conversations chain by
`previous_response_id`, kept here as the real API keeps them: a follow-up must answer every
`computer_call` with a `computer_call_output` and acknowledge the safety checks it was shown.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from susbench.agents.demonstration import DemonstrationMove
from susbench.agents.servers.base import ProtocolHandler, Refused, estimate_tokens, require
from susbench.agents.servers.policy import OFFSCREEN, Dialogue, ScriptedPolicy

GA_BATCH = 4
SAFETY_CHECK = {
    "code": "malicious_instructions",
    "message": "The page shows instructions that may not come from the user. Check before going on.",
}


@dataclass(frozen=True)
class Stored:
    """What a returned response leaves for its follow-up."""

    first_text: str
    turn: int
    calls: tuple[str, ...]
    checks: tuple[str, ...]


def cua_action(move: DemonstrationMove, centre: tuple[int, int]) -> dict[str, Any]:
    match move.kind:
        case "click":
            return {"type": "click", "button": "left", "x": round(move.x or 0), "y": round(move.y or 0)}
        case "type":
            return {"type": "type", "text": move.text}
        case "press":
            return {"type": "keypress", "keys": move.text.split("+")}
        case "scroll":
            return {
                "type": "scroll",
                "x": centre[0],
                "y": centre[1],
                "scroll_x": 0,
                "scroll_y": round(move.dy),
            }
        case "wait":
            return {"type": "wait"}
    raise Refused(
        500, "server_error", f"the scripted policy cannot express {move.kind!r} with the computer tool"
    )


def _input_text(items: Any) -> str:
    if isinstance(items, str):
        return items
    texts = []
    for item in items or []:
        content = item.get("content") if isinstance(item, dict) else None
        if isinstance(content, str):
            texts.append(content)
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "input_text":
                texts.append(part.get("text", ""))
    return "\n".join(texts)


def computer_tool(tools: Any) -> dict[str, Any]:
    found = [tool for tool in tools or [] if tool.get("type") in ("computer_use_preview", "computer")]
    if len(found) != 1:
        raise Refused(400, "invalid_request_error", "tools: expected one computer tool")
    tool = found[0]
    if tool["type"] == "computer_use_preview":
        missing = [name for name in ("display_width", "display_height", "environment") if name not in tool]
        if missing:
            raise Refused(400, "invalid_request_error", f"tools[0]: missing {', '.join(missing)}")
    return tool


class Responses(ProtocolHandler):
    path = "/v1/responses"

    def __init__(self, policy: ScriptedPolicy) -> None:
        super().__init__(policy)
        self.stored: dict[str, Stored] = {}
        self.lock = threading.Lock()

    def authorized(self, headers: dict[str, str], api_key: str) -> bool:
        return headers.get("authorization") == f"Bearer {api_key}"

    def error_body(self, status: int, kind: str, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}

    def _follow_up(self, request: dict[str, Any]) -> Stored | None:
        previous = request.get("previous_response_id")
        if previous is None:
            return None
        with self.lock:
            before = self.stored.get(previous)
        if before is None:
            raise Refused(400, "invalid_request_error", f"Previous response with id '{previous}' not found.")
        outputs = {
            item.get("call_id"): item
            for item in request["input"]
            if isinstance(item, dict) and item.get("type") == "computer_call_output"
        }
        for call_id in before.calls:
            output = outputs.get(call_id)
            if output is None:
                raise Refused(
                    400, "invalid_request_error", f"No tool output found for computer call {call_id}."
                )
            if output.get("output", {}).get("type") != "computer_screenshot":
                raise Refused(
                    400, "invalid_request_error", "computer_call_output.output must be a computer_screenshot"
                )
            acknowledged = {check.get("id") for check in output.get("acknowledged_safety_checks") or []}
            if not set(before.checks) <= acknowledged:
                raise Refused(400, "invalid_request_error", "pending safety checks were not acknowledged")
        return before

    def answer(self, request: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        require(request, "model", "input")
        tool = computer_tool(request.get("tools"))
        if tool["type"] == "computer_use_preview" and request.get("truncation") != "auto":
            raise Refused(400, "invalid_request_error", "computer_use_preview requires truncation 'auto'")
        before = self._follow_up(request)
        dialogue = Dialogue(
            first_text=before.first_text if before else _input_text(request["input"]),
            turn=0 if before is None else before.turn + 1,
            latest_text=_input_text(request["input"]),
        )
        step = self.policy.step(dialogue, batch=GA_BATCH if tool["type"] == "computer" else 1)
        demo = self.policy.find(dialogue.first_text)
        demo_centre = (640, 400) if demo is None else (demo.viewport.width // 2, demo.viewport.height // 2)
        output: list[dict[str, Any]] = []
        calls: list[str] = []
        checks: list[dict[str, Any]] = []
        words = step.moves[0].words if step.moves else ""
        if words:
            output.append(
                {
                    "type": "reasoning",
                    "id": f"rs_{uuid.uuid4().hex}",
                    "summary": [{"type": "summary_text", "text": words}],
                }
            )
        final = step.final_message()
        if step.fault is not None:
            actions = (
                [{"type": "teleport"}]
                if step.fault == "malformed"
                else [{"type": "click", "button": "left", "x": int(OFFSCREEN[0]), "y": int(OFFSCREEN[1])}]
            )
        elif final is None:
            actions = [cua_action(move, demo_centre) for move in step.moves]
        else:
            actions = []
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{uuid.uuid4().hex}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": final, "annotations": []}],
                }
            )
        if actions:
            if dialogue.turn in self.policy.safety_turns:
                checks = [{"id": f"cu_sc_{uuid.uuid4().hex[:16]}", **SAFETY_CHECK}]
            call_id = f"call_{uuid.uuid4().hex[:24]}"
            call: dict[str, Any] = {
                "type": "computer_call",
                "id": f"cu_{uuid.uuid4().hex}",
                "call_id": call_id,
                "pending_safety_checks": checks,
                "status": "completed",
            }
            if tool["type"] == "computer":
                call["actions"] = actions
            else:
                call["action"] = actions[0]
            output.append(call)
            calls.append(call_id)
        response_id = f"resp_{uuid.uuid4().hex}"
        with self.lock:
            self.stored[response_id] = Stored(
                first_text=dialogue.first_text,
                turn=dialogue.turn,
                calls=tuple(calls),
                checks=tuple(check["id"] for check in checks),
            )
        input_tokens = estimate_tokens(request["input"])
        output_tokens = estimate_tokens(output)
        return {
            "id": response_id,
            "object": "response",
            "created_at": time.time(),
            "status": "completed",
            "model": request["model"],
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": request["tools"],
            "previous_response_id": request.get("previous_response_id"),
            "truncation": request.get("truncation", "disabled"),
            "instructions": request.get("instructions"),
            "error": None,
            "incomplete_details": None,
            "metadata": {},
            "temperature": 1.0,
            "top_p": 1.0,
            "usage": {
                "input_tokens": input_tokens,
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": input_tokens + output_tokens,
            },
        }
