"""`anthropic-cu`: Anthropic's computer-use loop on the Messages API (beta).

The tool version is a setting (`computer_20250124` by default; `computer_20251124`, and the older
`computer_20241022`), each sent with the beta header it needs. Screenshots are scaled to the tool's
display size (by default the viewport, shrunk to fit 1280x800) and the model's coordinates are
mapped back to the viewport. Each `tool_use` is carried out and answered with a `tool_result`; the
last one of a turn holds the new screenshot and the page's URL, title and tabs. A reply without
`tool_use` is the model's final message.
"""

from __future__ import annotations

import base64
from typing import Any, Literal

import anthropic
from pydantic import Field

from susbench.agents.actions import ActionRefused, AgentAction, parse_action
from susbench.agents.drawing import resize_png
from susbench.agents.harness import AgentOperator, Conversation, Feedback, Proposal, Turn, prompt
from susbench.agents.observe import Observation
from susbench.agents.settings import AgentConfig
from susbench.agents.window import ViewportState
from susbench.operators.base import ObservationKind

ToolVersion = Literal["computer_20241022", "computer_20250124", "computer_20251124"]
BETA_HEADERS: dict[str, str] = {
    "computer_20241022": "computer-use-2024-10-22",
    "computer_20250124": "computer-use-2025-01-24",
    "computer_20251124": "computer-use-2025-11-24",
}
LARGEST_DISPLAY = (1280, 800)
CLICKS = {
    "left_click": ("left", 1),
    "right_click": ("right", 1),
    "middle_click": ("middle", 1),
    "double_click": ("left", 2),
    "triple_click": ("left", 3),
}
OMITTED_IMAGE = "(an earlier screenshot, omitted)"


class AnthropicConfig(AgentConfig):
    model: str = "claude-sonnet-4-5"
    api_key_env: str = "ANTHROPIC_API_KEY"
    observation: ObservationKind = "screenshot"
    tool_version: ToolVersion = "computer_20250124"
    display_width: int | None = Field(
        default=None, ge=200, description="default: the viewport, fit to 1280x800"
    )
    display_height: int | None = Field(default=None, ge=200)
    scroll_px: int = Field(default=100, ge=1, description="CSS px per unit of scroll_amount")
    keep_images: int = 3


def display_size(config: AnthropicConfig, viewport: ViewportState) -> tuple[int, int]:
    if config.display_width and config.display_height:
        return config.display_width, config.display_height
    scale = min(1.0, LARGEST_DISPLAY[0] / viewport.width, LARGEST_DISPLAY[1] / viewport.height)
    return round(viewport.width * scale), round(viewport.height * scale)


class Display:
    """The tool's display and the viewport: coordinates one way, images the other."""

    def __init__(self, size: tuple[int, int], viewport: ViewportState) -> None:
        self.width, self.height = size
        self.sx = viewport.width / self.width
        self.sy = viewport.height / self.height
        self.mouse = (0, 0)

    def point(self, coordinate: Any) -> tuple[float, float]:
        """A display coordinate `[x, y]` on the viewport (checked against the display's size)."""
        if not (isinstance(coordinate, list | tuple) and len(coordinate) == 2):
            raise ActionRefused(f"coordinate must be [x, y], got {coordinate!r}")
        x, y = coordinate
        if not (isinstance(x, int | float) and isinstance(y, int | float)):
            raise ActionRefused(f"coordinate must be two numbers, got {coordinate!r}")
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise ActionRefused(f"({x}, {y}) is outside the {self.width}x{self.height} display")
        self.mouse = (int(x), int(y))
        return x * self.sx, y * self.sy

    def image(self, png: bytes) -> str:
        return base64.b64encode(resize_png(png, self.width, self.height)).decode("ascii")


def computer_action(data: dict[str, Any], display: Display, scroll_px: int) -> AgentAction:
    """A computer tool input as an `AgentAction` in viewport coordinates (`ActionRefused` if not one)."""
    kind = data.get("action")
    if kind in CLICKS:
        button, clicks = CLICKS[kind]
        modifiers = [key for key in str(data.get("text") or "").split("+") if key]
        if data.get("coordinate") is None:
            x, y = display.mouse[0] * display.sx, display.mouse[1] * display.sy
        else:
            x, y = display.point(data["coordinate"])
        return parse_action(
            {"action": "click", "x": x, "y": y, "button": button, "clicks": clicks, "modifiers": modifiers}
        )
    match kind:
        case "mouse_move":
            x, y = display.point(data.get("coordinate"))
            return parse_action({"action": "move", "x": x, "y": y})
        case "left_click_drag":
            start = data.get("start_coordinate") or list(display.mouse)
            path = [display.point(start), display.point(data.get("coordinate"))]
            return parse_action({"action": "drag", "path": [{"x": x, "y": y} for x, y in path]})
        case "left_mouse_down" | "left_mouse_up":
            point = display.point(data["coordinate"]) if data.get("coordinate") is not None else (None, None)
            action = "mouse_down" if kind == "left_mouse_down" else "mouse_up"
            return parse_action({"action": action, "x": point[0], "y": point[1]})
        case "key":
            return parse_action({"action": "press", "keys": data.get("text")})
        case "hold_key":
            return parse_action(
                {"action": "press", "keys": data.get("text"), "hold_s": data.get("duration", 1)}
            )
        case "type":
            return parse_action({"action": "type", "text": data.get("text")})
        case "scroll":
            x, y = display.point(data.get("coordinate") or [display.width // 2, display.height // 2])
            amount = float(data.get("scroll_amount") or 3) * scroll_px
            direction = data.get("scroll_direction")
            dx, dy = {
                "up": (0, -amount),
                "down": (0, amount),
                "left": (-amount, 0),
                "right": (amount, 0),
            }.get(direction, (None, None))
            if dx is None:
                raise ActionRefused(f"scroll_direction must be up, down, left or right, got {direction!r}")
            return parse_action({"action": "scroll", "x": x, "y": y, "dx": dx, "dy": dy})
        case "wait":
            return parse_action({"action": "wait", "seconds": data.get("duration", 1)})
        case "screenshot" | "cursor_position":
            return parse_action({"action": "screenshot"})
    raise ActionRefused(f"unsupported computer action {kind!r}")


class ComputerConversation(Conversation):
    def __init__(self, operator: AnthropicCUOperator, instruction: str, first: Observation) -> None:
        self.operator = operator
        self.config = operator.config
        self.display = Display(display_size(self.config, first.viewport), first.viewport)
        self.instruction = instruction
        self.messages: list[dict[str, Any]] = []
        self.pending: dict[str, Any] | None = None
        self.uses: list[tuple[str, str]] = []

    def tool(self) -> dict[str, Any]:
        return {
            "type": self.config.tool_version,
            "name": "computer",
            "display_width_px": self.display.width,
            "display_height_px": self.display.height,
        }

    def prepare(self, observation: Observation, feedback: list[Feedback]) -> None:
        image = {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": self.display.image(observation.screenshot),
            },
        }
        facts = {"type": "text", "text": observation.text}
        if not self.uses:
            task = {"type": "text", "text": self.instruction}
            self.pending = {"role": "user", "content": [task, image, facts]}
            return
        results = {item.call_id: item for item in feedback}
        blocks = []
        for index, (use_id, kind) in enumerate(self.uses):
            item = results.get(use_id)
            ok = item is None or item.ok
            text = "ok" if ok else f"error: {item.message if item else ''}"
            if kind == "cursor_position":
                text = f"X={self.display.mouse[0]},Y={self.display.mouse[1]}"
            content: list[dict[str, Any]] = [{"type": "text", "text": text}]
            if index == len(self.uses) - 1:
                content += [image, facts]
            blocks.append(
                {"type": "tool_result", "tool_use_id": use_id, "content": content, "is_error": not ok}
            )
        self.pending = {"role": "user", "content": blocks}

    def _request_messages(self) -> list[dict[str, Any]]:
        """History plus the pending turn, only the newest screenshots kept."""
        messages = [*self.messages, *([self.pending] if self.pending else [])]
        seen = 0
        shaped: list[dict[str, Any]] = []
        for message in reversed(messages):
            if message["role"] != "user":
                shaped.append(message)
                continue
            blocks = []
            for block in message["content"]:
                if block["type"] == "tool_result":
                    inner, seen = _keep_images(block["content"], seen, self.config.keep_images)
                    blocks.append({**block, "content": inner})
                else:
                    kept, seen = _keep_images([block], seen, self.config.keep_images)
                    blocks.extend(kept)
            shaped.append({"role": "user", "content": blocks})
        return list(reversed(shaped))

    def send(self, timeout_s: float) -> Any:
        request: dict[str, Any] = {
            "model": self.config.model,
            "max_tokens": self.config.max_tokens,
            "system": self.config.system_prompt or prompt("computer.txt"),
            "messages": self._request_messages(),
            "tools": [self.tool()],
            "betas": [BETA_HEADERS[self.config.tool_version]],
            "timeout": timeout_s,
        }
        if self.config.temperature is not None:
            request["temperature"] = self.config.temperature
        return self.operator.client.beta.messages.with_raw_response.create(**request)

    def accept(self, reply: Any) -> Turn:
        if self.pending is not None:
            self.messages.append(self.pending)
            self.pending = None
        content = [block.model_dump(mode="json", exclude_none=True) for block in reply.content]
        self.messages.append({"role": "assistant", "content": content})
        words = [block["text"] for block in content if block["type"] == "text"]
        uses = [block for block in content if block["type"] == "tool_use"]
        self.uses = [(block["id"], str(block.get("input", {}).get("action"))) for block in uses]
        proposals = [self._proposal(block) for block in uses]
        text = "\n".join(words)
        usage = reply.usage
        return Turn(
            text=text,
            proposals=proposals,
            final=text if not uses else None,
            tokens_in=usage.input_tokens if usage else 0,
            tokens_out=usage.output_tokens if usage else 0,
        )

    def _proposal(self, block: dict[str, Any]) -> Proposal:
        if block.get("name") != "computer":
            return Proposal(block["id"], None, f"unknown tool {block.get('name')!r}; the tool is 'computer'")
        try:
            return Proposal(
                block["id"], computer_action(block.get("input") or {}, self.display, self.config.scroll_px)
            )
        except ActionRefused as exc:
            return Proposal(block["id"], None, str(exc))


def _keep_images(blocks: list[dict[str, Any]], seen: int, keep: int) -> tuple[list[dict[str, Any]], int]:
    kept = []
    for block in blocks:
        if block.get("type") == "image":
            seen += 1
            if seen > keep:
                kept.append({"type": "text", "text": OMITTED_IMAGE})
                continue
        kept.append(block)
    return kept, seen


class AnthropicCUOperator(AgentOperator[AnthropicConfig]):
    name = "anthropic-cu"
    config_model = AnthropicConfig
    observations = ("screenshot",)
    connection_errors = (anthropic.APIConnectionError,)
    sdk = "anthropic"
    base_url_env = "ANTHROPIC_BASE_URL"

    def make_client(self, key: str) -> anthropic.Anthropic:
        return anthropic.Anthropic(
            api_key=key, base_url=self.config.base_url, max_retries=0, timeout=self.config.timeout_s
        )

    def conversation(self, instruction: str, observation: Observation) -> Conversation:
        return ComputerConversation(self, instruction, observation)
