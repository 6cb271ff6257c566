"""Drawing on screenshots with Pillow, never in the page: Set-of-Marks boxes for the model, and the
actions taken, for the trace viewer."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any, Protocol

from PIL import Image, ImageDraw, ImageFont

PALETTE = ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#008080", "#9a6324", "#800000")
ACTION_COLOUR = "#ff1f5a"
CAPTION_HEIGHT = 26


class Rect(Protocol):
    @property
    def x(self) -> float: ...

    @property
    def y(self) -> float: ...

    @property
    def width(self) -> float: ...

    @property
    def height(self) -> float: ...


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()


def draw_marks(png: bytes, marks: Sequence[tuple[int, Rect]]) -> bytes:
    """The screenshot with a numbered box around each mark (Set-of-Marks)."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    draw = ImageDraw.Draw(image)
    font = _font(12)
    for number, box in marks:
        colour = PALETTE[number % len(PALETTE)]
        left, top = round(box.x), round(box.y)
        right, bottom = round(box.x + box.width), round(box.y + box.height)
        draw.rectangle((left, top, right, bottom), outline=colour, width=2)
        label = str(number)
        text_left, text_top, text_right, text_bottom = draw.textbbox((0, 0), label, font=font)
        width, height = text_right - text_left + 6, text_bottom - text_top + 4
        tag_top = top - height if top - height >= 0 else top
        draw.rectangle((left, tag_top, left + width, tag_top + height), fill=colour)
        draw.text((left + 3 - text_left, tag_top + 2 - text_top), label, fill="white", font=font)
    return _png(image)


def draw_actions(png: bytes, actions: Sequence[dict[str, Any]]) -> bytes:
    """The screenshot with each action drawn where it happened, and a caption naming them."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    canvas = Image.new("RGB", (image.width, image.height + CAPTION_HEIGHT), "white")
    canvas.paste(image, (0, CAPTION_HEIGHT))
    draw = ImageDraw.Draw(canvas)
    font = _font(14)
    for order, action in enumerate(actions, start=1):
        point = action.get("at") or (
            {"x": action["x"], "y": action["y"]}
            if action.get("x") is not None and action.get("y") is not None
            else None
        )
        if point is None:
            continue
        x, y = float(point["x"]), float(point["y"]) + CAPTION_HEIGHT
        if action.get("action") == "scroll":
            end = y + max(-160.0, min(160.0, float(action.get("dy", 0)) / 4))
            draw.line((x, y, x, end), fill=ACTION_COLOUR, width=4)
            head = 10 if end >= y else -10
            draw.polygon(((x - 9, end - head), (x + 9, end - head), (x, end)), fill=ACTION_COLOUR)
        else:
            draw.ellipse((x - 14, y - 14, x + 14, y + 14), outline=ACTION_COLOUR, width=4)
            draw.line((x - 22, y, x + 22, y), fill=ACTION_COLOUR, width=2)
            draw.line((x, y - 22, x, y + 22), fill=ACTION_COLOUR, width=2)
        draw.text((x + 18, y - 24), str(order), fill=ACTION_COLOUR, font=font)
    caption = "  ".join(
        f"{order}. {describe_action(action)}" for order, action in enumerate(actions, start=1)
    )
    draw.text((6, 5), caption or "(no action)", fill="black", font=font)
    return _png(canvas)


def describe_action(action: dict[str, Any]) -> str:
    """One line for an action, as a trace reader wants it."""
    kind = action.get("action", "?")
    where = action.get("at") or action
    if kind == "click":
        target = f"element {action['element']}" if action.get("element") is not None else ""
        times = {2: "double-", 3: "triple-"}.get(int(action.get("clicks", 1)), "")
        at = f"({float(where['x']):.0f}, {float(where['y']):.0f})" if where.get("x") is not None else ""
        return f"{times}click {target} {at}".replace("  ", " ").strip()
    if kind == "type":
        return f"type {action.get('text', '')!r}"
    if kind == "press":
        return f"press {action.get('keys', '')}"
    if kind == "scroll":
        return f"scroll dy={float(action.get('dy', 0)):.0f}"
    if kind == "goto":
        return f"go to {action.get('url', '')}"
    if kind == "switch_tab":
        return f"switch to tab {action.get('tab')}"
    if kind == "wait":
        return f"wait {float(action.get('seconds', 0)):g} s"
    if kind == "done":
        return f"done: {action.get('answer', '')}".rstrip(": ")
    return str(kind)


def resize_png(png: bytes, width: int, height: int) -> bytes:
    """The image scaled to (width, height), e.g. to a computer-use tool's display size."""
    image = Image.open(io.BytesIO(png))
    if image.size == (width, height):
        return png
    return _png(image.convert("RGB").resize((width, height), Image.Resampling.LANCZOS))
