"""What the scripted model does: replay a demonstration, one turn per request, with faults on cue.

A turn is found from the request alone (how many times the model has answered in this
conversation), so the stateless protocols need no server state. The task is found by its
instruction in the conversation's first user turn. Element targets are matched by role, name and
place among the elements so named in the agent's latest element list; screenshot-only agents get
the demonstration's coordinates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from susbench.agents.demonstration import Demonstration, DemonstrationMove, DemonstrationSet
from susbench.agents.observe import SOM_HEADER
from susbench.core.models import Frozen

FaultKind = Literal["malformed", "offscreen", "unknown_element", "safety_check"]
ELEMENT_LINE = re.compile(r'^\s*\[(\d+)\] (\S+)(?: "([^"]*)")?', re.MULTILINE)
UNKNOWN_ELEMENT = 9999
OFFSCREEN = (5000.0, 5000.0)


class Fault(Frozen):
    """A bad reply the scripted model gives at one turn, before going on with the demonstration.

    `safety_check` instead attaches a pending safety check to that turn's action (Responses API).
    """

    turn: int = Field(ge=0)
    kind: FaultKind


@dataclass(frozen=True)
class Dialogue:
    """What a protocol handler read from one request."""

    first_text: str
    turn: int
    latest_text: str


@dataclass(frozen=True)
class ScriptedTurn:
    """One scripted turn: the moves to reply with, a fault, or (neither) the final message.

    A demonstration ends with a `done` move: chat tools call `done` with it, the computer-use
    protocols (which have no such action) end with it as a plain message.
    """

    moves: tuple[DemonstrationMove, ...]
    fault: FaultKind | None = None
    final: str = ""

    def final_message(self) -> str | None:
        """The plain message this turn ends the conversation with, for protocols without `done`."""
        if self.fault is not None:
            return None
        if not self.moves:
            return self.final
        return self.moves[0].text if self.moves[0].kind == "done" else None


class ScriptedPolicy:
    """Replays demonstrations, inserting faults at the turns they name."""

    def __init__(self, demonstrations: DemonstrationSet, faults: tuple[Fault, ...] = ()) -> None:
        self.demonstrations = demonstrations.demonstrations
        self.faults = {fault.turn: fault.kind for fault in faults if fault.kind != "safety_check"}
        self.safety_turns = {fault.turn for fault in faults if fault.kind == "safety_check"}

    def find(self, first_text: str) -> Demonstration | None:
        return next((demo for demo in self.demonstrations if demo.instruction in first_text), None)

    def step(self, dialogue: Dialogue, batch: int = 1) -> ScriptedTurn:
        """The reply for this turn of this conversation (`batch`: moves one reply may carry)."""
        demo = self.find(dialogue.first_text)
        if demo is None:
            return ScriptedTurn(moves=(), final="I do not know this task, so I stop here.")
        if dialogue.turn in self.faults:
            return ScriptedTurn(moves=(), fault=self.faults[dialogue.turn])
        position = 0
        for turn in range(dialogue.turn):
            if turn not in self.faults:
                position += len(_group(demo.moves, position, batch))
        moves = _group(demo.moves, position, batch)
        if not moves:
            return ScriptedTurn(moves=(), final="Done.")
        return ScriptedTurn(moves=moves)


def _group(moves: tuple[DemonstrationMove, ...], position: int, batch: int) -> tuple[DemonstrationMove, ...]:
    """The moves one reply carries from `position`: a scroll may share a reply with what follows it."""
    if position >= len(moves):
        return ()
    group = [moves[position]]
    while len(group) < batch and group[-1].kind == "scroll" and position + len(group) < len(moves):
        group.append(moves[position + len(group)])
    return tuple(group)


def element_number(move: DemonstrationMove, latest_text: str) -> int | None:
    """The number the agent's latest element list gives the move's target, if it lists one."""
    if move.target is None or not latest_text:
        return None
    listed = [(int(number), role, name or "") for number, role, name in ELEMENT_LINE.findall(latest_text)]
    same = [
        number
        for number, role, name in listed
        if (role, name) == (move.target.role, move.target.name.replace('"', "'"))
    ]
    ordinal = move.target.visible_ordinal if SOM_HEADER in latest_text else move.target.ordinal
    if ordinal is None or ordinal >= len(same):
        return None
    return same[ordinal]
