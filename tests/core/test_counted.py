"""Counts in messages agree with their noun: "1 episode", "2 episodes", never "1 episodes"."""

from __future__ import annotations

from susbench.core.tables import counted


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert counted(1, "episode") == "1 episode"
    assert counted(0, "picture") == "0 pictures"
    assert counted(2, "task flow") == "2 task flows"
    assert counted(3, "entry", "entries") == "3 entries"
