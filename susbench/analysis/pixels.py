"""Visual difference of two screenshots: the share of pixels that changed, and an image showing where.

Screenshots of different heights are compared on the larger canvas; the part only one of them
covers counts as changed. A pixel changed when any colour channel moved by more than THRESHOLD
(anti-aliasing jitter stays below it; a moved or restyled element does not).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

THRESHOLD = 24
HIGHLIGHT = np.array([230, 30, 50], dtype=np.uint8)


def _canvas(image: np.ndarray, height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The image on a white canvas of the given size, and the mask of pixels it covers."""
    canvas = np.full((height, width, 3), 255, dtype=np.uint8)
    covered = np.zeros((height, width), dtype=bool)
    canvas[: image.shape[0], : image.shape[1]] = image
    covered[: image.shape[0], : image.shape[1]] = True
    return canvas, covered


def pixel_diff(first: Path, second: Path, out: Path | None = None) -> float:
    """Fraction of pixels changed from `first` to `second`; writes the highlighted diff to `out`.

    The diff image is `second` washed out to light grey, with every changed pixel in red.
    """
    with Image.open(first) as image_a, Image.open(second) as image_b:
        a = np.asarray(image_a.convert("RGB"))
        b = np.asarray(image_b.convert("RGB"))
    height, width = max(a.shape[0], b.shape[0]), max(a.shape[1], b.shape[1])
    a, covered_a = _canvas(a, height, width)
    b, covered_b = _canvas(b, height, width)
    delta = np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2)
    changed = (delta > THRESHOLD) | (covered_a != covered_b)
    if out is not None:
        grey = b.mean(axis=2, keepdims=True).astype(np.uint16)
        washed = (255 - (255 - grey) // 4).astype(np.uint8).repeat(3, axis=2)
        washed[changed] = HIGHLIGHT
        Image.fromarray(washed).save(out, optimize=True)
    return float(changed.mean())
