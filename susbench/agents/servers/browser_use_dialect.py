"""Browser Use's dialect of chat completions: its structured output, aimed at its own element list.

Browser Use asks for one JSON object per step (`response_format` json_schema named `agent_output`:
its thoughts and a list of actions such as `{"click": {"index": 12}}`), and sends its whole state
as one user message: the step number (`<step_info>StepN ...`), the user request, and its element
list, lines like `[12]<button type=submit />` followed by the element's text on deeper-indented
lines. The scripted model finds a move's target there by its accessible name (an `aria-label`, or
its text) and its place among the elements so named, and answers with that element's index.
Browser Use numbers its steps, so the turn is read from the request; the demonstration is regrouped
into Browser Use's actions (choosing in a select is one step).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from susbench.agents.demonstration import Demonstration, DemonstrationMove
from susbench.agents.servers.base import Refused
from susbench.agents.servers.policy import ScriptedPolicy

SCHEMA_NAME = "agent_output"
STEP_INFO = re.compile(r"<step_info>\s*Step\s*(\d+)")
ELEMENT = re.compile(r"^(\t*)(?:\|SHADOW\(\w+\)\|)?\*?(?:\|scroll element)?\[(\d+)\]<(\w+)(.*?) />")
LABEL = re.compile(r"aria-label=(.*?)(?: [\w-]+=|$)")


def speaks_browser_use(request: dict[str, Any]) -> bool:
    response_format = request.get("response_format") or {}
    return (response_format.get("json_schema") or {}).get("name") == SCHEMA_NAME


@dataclass(frozen=True)
class ListedElement:
    """One line of Browser Use's element list: its index, tag, and the names a person would read."""

    index: int
    tag: str
    names: tuple[str, ...]


def _clean(text: str) -> str:
    return " ".join(text.split())


def listed_elements(state: str) -> list[ListedElement]:
    """Browser Use's interactive elements, in its (document) order."""
    lines = state.splitlines()
    found = []
    label = ""
    for number, line in enumerate(lines):
        match = ELEMENT.match(line)
        if match is None:
            label = _clean(line) if line.strip() and not line.strip().startswith(("|", "<", "*")) else label
            continue
        depth, index, tag, attributes = (
            len(match.group(1)),
            int(match.group(2)),
            match.group(3),
            match.group(4),
        )
        texts = []
        for below in lines[number + 1 :]:
            if len(below) - len(below.lstrip("\t")) <= depth:
                break
            if not ELEMENT.match(below) and not below.strip().startswith(("|", "Shadow End", "Open Shadow")):
                texts.append(below.strip())
        aria_label = LABEL.search(attributes)
        names = [_clean(" ".join(texts))]
        if aria_label is not None:
            names.insert(0, _clean(aria_label.group(1)))
        if tag == "select" and not any(names):
            names = [label]  # a select's name is its label, the text just before it
        found.append(ListedElement(index, tag, tuple(name for name in names if name)))
    return found


def element_index(move: DemonstrationMove, state: str) -> int | None:
    """The index Browser Use's own list gives the move's target (by name, then place among the same)."""
    if move.target is None:
        return None
    wanted = _clean(move.target.name.replace('"', "'"))
    elements = listed_elements(state)
    same = [element.index for element in elements if wanted in element.names]
    if not same:
        same = [element.index for element in elements if any(wanted in name for name in element.names)]
    if not same:
        return None
    for ordinal in (move.target.ordinal, move.target.visible_ordinal):
        if ordinal is not None and ordinal < len(same):
            return same[ordinal]
    return same[-1]


def _field_before(demo: Demonstration, move: DemonstrationMove) -> DemonstrationMove | None:
    """The click that put the caret in the field a `type` move types into."""
    position = demo.moves.index(move)
    return next((earlier for earlier in reversed(demo.moves[:position]) if earlier.kind == "click"), None)


def browser_use_steps(demo: Demonstration) -> list[tuple[DemonstrationMove, ...]]:
    """The demonstration in Browser Use's steps: opening a select, typing an option's name and pressing
    Enter is one `select_dropdown` for it; every other move is a step of its own."""
    steps: list[tuple[DemonstrationMove, ...]] = []
    moves = list(demo.moves)
    while moves:
        move = moves.pop(0)
        opens_select = move.kind == "click" and move.target is not None and move.target.role == "combobox"
        if opens_select and moves and moves[0].kind == "type":
            chosen = (move, moves.pop(0))
            if moves and moves[0].kind == "press" and moves[0].text == "Enter":
                chosen += (moves.pop(0),)
            steps.append(chosen)
            continue
        steps.append((move,))
    return steps


def browser_use_action(
    demo: Demonstration, moves: tuple[DemonstrationMove, ...], state: str
) -> dict[str, Any]:
    """One of Browser Use's steps as its action."""
    move = moves[0]
    if len(moves) > 1:
        return {"select_dropdown": {"index": element_index(move, state) or 0, "text": moves[1].text}}
    match move.kind:
        case "click":
            index = element_index(move, state)
            if index is None:
                return {"click": {"coordinate_x": round(move.x or 0), "coordinate_y": round(move.y or 0)}}
            return {"click": {"index": index}}
        case "type":
            field = _field_before(demo, move)
            index = element_index(field, state) if field is not None else None
            if index is None:  # type into what has the focus, as the demonstration did
                return {"send_keys": {"keys": move.text}}
            return {"input": {"index": index, "text": move.text, "clear": False}}
        case "press":
            return {"send_keys": {"keys": move.text}}
        case "scroll":
            pages = abs(move.dy) / demo.viewport.height
            return {"scroll": {"down": move.dy > 0, "pages": round(pages, 2)}}
        case "goto":
            return {"navigate": {"url": move.url, "new_tab": False}}
        case "wait":
            # Browser Use waits a second less than asked (it counts on a model call that long)
            return {"wait": {"seconds": max(1, round(move.seconds)) + 1}}
    return {"done": {"text": move.text, "success": True}}


def _state_text(messages: list[dict[str, Any]]) -> str:
    users = [message for message in messages if message.get("role") == "user"]
    if not users:
        raise Refused(400, "invalid_request_error", "messages: Browser Use sends its state as a user message")
    content = users[-1].get("content")
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def browser_use_reply(policy: ScriptedPolicy, request: dict[str, Any]) -> str:
    """The scripted model's structured output for this Browser Use step (JSON text)."""
    state = _state_text(request["messages"])
    step_info = STEP_INFO.search(state)
    if step_info is None:
        raise Refused(400, "invalid_request_error", "messages: no <step_info> in Browser Use's state")
    turn = int(step_info.group(1)) - 1
    demo = policy.find(state)
    steps = browser_use_steps(demo) if demo is not None else []
    if turn >= len(steps):
        action = {
            "done": {"text": "Done." if demo else "I do not know this task, so I stop here.", "success": True}
        }
        words = "Nothing left to do."
    else:
        action = browser_use_action(demo, steps[turn], state)  # type: ignore[arg-type]
        words = steps[turn][0].words or f"Next: {next(iter(action))}."
    reply = {
        "thinking": words,
        "evaluation_previous_goal": "Success",
        "memory": words,
        "next_goal": words,
        "action": [action],
    }
    asked = request["response_format"]["json_schema"].get("schema", {}).get("properties", reply)
    return json.dumps({name: value for name, value in reply.items() if name in asked})
