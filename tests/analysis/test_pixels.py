"""The visual diff counts changed pixels, treats uncovered canvas as changed, and marks them red."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from susbench.analysis.pixels import HIGHLIGHT, pixel_diff


def save(path: Path, array: np.ndarray) -> Path:
    Image.fromarray(array.astype(np.uint8)).save(path)
    return path


def test_changed_share_and_highlight(tmp_path: Path) -> None:
    base = np.full((10, 20, 3), 200)
    moved = base.copy()
    moved[2:4, 5:10] = 0  # 10 of 200 pixels changed
    moved[6, 6] = 210  # below the threshold: anti-aliasing jitter
    diff = tmp_path / "diff.png"
    ratio = pixel_diff(save(tmp_path / "a.png", base), save(tmp_path / "b.png", moved), diff)
    assert ratio == 10 / 200
    marked = np.asarray(Image.open(diff).convert("RGB"))
    assert (marked[2, 5] == HIGHLIGHT).all() and not (marked[6, 6] == HIGHLIGHT).all()


def test_taller_page_counts_its_extra_part_as_changed(tmp_path: Path) -> None:
    short = save(tmp_path / "short.png", np.full((10, 10, 3), 255))
    tall = save(tmp_path / "tall.png", np.full((20, 10, 3), 255))
    assert pixel_diff(short, tall) == 0.5
    assert pixel_diff(short, short) == 0.0
