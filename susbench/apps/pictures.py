"""Product and article pictures drawn by the project with Pillow: a shaded shape on a tinted ground.

A picture is a pure function of its key and shape (colours from a digest of the key), and Pillow's
PNG writer adds no timestamp, so the same content gives byte-identical files on every machine.
"""

from __future__ import annotations

import colorsys
import hashlib
import io

from PIL import Image, ImageDraw

SIZE = 600


def _colour(key: str, salt: str, saturation: float, lightness: float) -> tuple[int, int, int]:
    hue = int.from_bytes(hashlib.sha256(f"{salt}|{key}".encode()).digest()[:4], "big") / 2**32
    red, green, blue = colorsys.hls_to_rgb(hue, lightness, saturation)
    return round(red * 255), round(green * 255), round(blue * 255)


def _shape(
    draw: ImageDraw.ImageDraw, shape: str, fill: tuple[int, int, int], edge: tuple[int, int, int]
) -> None:
    """One simple drawing per shape name; unknown shapes are a rounded box."""
    c = SIZE // 2
    if shape in ("mug", "candle", "jar", "bottle", "pot"):
        width = {"bottle": 110, "candle": 150, "mug": 170, "jar": 160, "pot": 200}[shape]
        top = {"bottle": 120, "candle": 230, "mug": 200, "jar": 170, "pot": 220}[shape]
        draw.rounded_rectangle(
            (c - width // 2, top, c + width // 2, 470), 24, fill=fill, outline=edge, width=6
        )
        if shape == "mug":
            draw.arc((c + width // 2 - 40, 250, c + width // 2 + 70, 390), -90, 90, fill=edge, width=18)
        if shape == "bottle":
            draw.rectangle((c - 35, 80, c + 35, 125), fill=edge)
        if shape == "candle":
            draw.ellipse((c - 14, 170, c + 14, 225), fill=(245, 180, 60))
    elif shape in ("pan", "lamp"):
        draw.ellipse((120, 240, 420, 420), fill=fill, outline=edge, width=6)
        draw.rounded_rectangle((400, 310, 540, 345), 12, fill=edge)
    elif shape in ("knife", "pen"):
        draw.polygon([(110, 330), (420, 270), (470, 300), (420, 330)], fill=fill, outline=edge)
        draw.rounded_rectangle((420, 285, 530, 325), 14, fill=edge)
    elif shape in ("bag", "jacket"):
        draw.rounded_rectangle((170, 200, 430, 480), 40, fill=fill, outline=edge, width=6)
        draw.arc((220, 110, 380, 260), 180, 360, fill=edge, width=16)
    elif shape == "stool":
        draw.rectangle((160, 220, 440, 260), fill=fill, outline=edge, width=6)
        draw.line((190, 260, 410, 470), fill=edge, width=14)
        draw.line((410, 260, 190, 470), fill=edge, width=14)
    else:
        draw.rounded_rectangle((140, 170, 460, 450), 30, fill=fill, outline=edge, width=6)
        draw.line((170, 250, 430, 250), fill=edge, width=5)


def picture(key: str, shape: str) -> bytes:
    """A 600×600 PNG for `key` (a product or article slug) drawn as `shape`."""
    ground = _colour(key, "ground", 0.35, 0.92)
    fill = _colour(key, "fill", 0.55, 0.55)
    edge = _colour(key, "edge", 0.45, 0.28)
    image = Image.new("RGB", (SIZE, SIZE), ground)
    draw = ImageDraw.Draw(image)
    draw.ellipse((110, 440, 490, 520), fill=tuple(max(0, value - 30) for value in ground))
    _shape(draw, shape, fill, edge)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()
