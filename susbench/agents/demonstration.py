"""Demonstrations: a task walked once by a scripted baseline, move by move, for a scripted model to replay.

Each move is an action in viewport coordinates together with the element it hit, described as a
person perceives it (role, accessible name, and which of the elements so named it was), so a
server can answer a screenshot-only agent with the coordinates and a text-observation agent with
the element's number in its own list. Replay on the same deterministic snapshot puts every
element where the demonstration found it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from susbench.core.loading import load_model
from susbench.core.models import Frozen, Identifier, Viewport

MoveKind = Literal["click", "type", "press", "scroll", "goto", "wait", "done"]


class Target(Frozen):
    """The element a move hit: role and accessible name, and its place among the elements so named."""

    role: str
    name: str
    ordinal: int = Field(ge=0, description="among all elements with this role and name, in document order")
    visible_ordinal: int | None = Field(default=None, ge=0, description="the same, among those on screen")


class DemonstrationMove(Frozen):
    """One action of a demonstration (viewport CSS px)."""

    kind: MoveKind
    x: float | None = None
    y: float | None = None
    target: Target | None = None
    text: str = Field(default="", description="typed text, pressed keys, or the final answer")
    url: str = ""
    dy: float = 0.0
    seconds: float = 0.0
    words: str = Field(default="", description="what the scripted model says it does")


class Demonstration(Frozen):
    """One task walked with one policy: the moves, and what the extension scored."""

    task_id: Identifier
    instruction: str
    injection_id: Identifier | None
    policy: Literal["naive", "careful"]
    viewport: Viewport
    outcome: str
    moves: tuple[DemonstrationMove, ...]


class DemonstrationSet(Frozen):
    demonstrations: tuple[Demonstration, ...]

    def save(self, path: Path) -> Path:
        path.write_text(self.model_dump_json(indent=1), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: Path) -> DemonstrationSet:
        return load_model(path, cls)
