"""The BrowserGym agent's dialect of chat completions (`susbench_browsergym.agent.ChatModelAgent`).

That agent sends a system message naming BrowserGym's high-level actions, the goal as the first user
turn, one assistant turn per action taken, and the latest observation, BrowserGym's own AXTree text
(lines like `[12] button 'Add to cart'`), as the last user turn. It reads one action from the reply,
a call such as `click("12")`. The scripted model finds a move's target in that AXTree by role, name
and place among the elements so named, and answers with its `bid`; where the tree names no such
element it clicks at the demonstration's point.
"""

from __future__ import annotations

import json
import re
from typing import Any

from susbench.agents.demonstration import DemonstrationMove

SYSTEM_MARK = "BrowserGym's high-level actions"
AXTREE_LINE = re.compile(r"""^\s*\[(\w+)\] (\S+) (?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")""", re.MULTILINE)


def speaks_browsergym(request: dict[str, Any]) -> bool:
    systems = [message for message in request.get("messages", []) if message.get("role") == "system"]
    return any(SYSTEM_MARK in str(message.get("content", "")) for message in systems)


def bid_of(move: DemonstrationMove, axtree: str) -> str | None:
    """The bid BrowserGym's AXTree gives the move's target (by role and name, then place among them)."""
    if move.target is None:
        return None
    wanted = move.target.name.replace('"', "'")
    same = [
        bid
        for bid, role, quoted, double_quoted in AXTREE_LINE.findall(axtree)
        if role == move.target.role and (quoted or double_quoted).replace('"', "'") == wanted
    ]
    if not same:
        return None
    return same[min(move.target.ordinal, len(same) - 1)]


def browsergym_action(move: DemonstrationMove | None, axtree: str, final: str = "Done.") -> str:
    """One demonstration move as a BrowserGym action; none left: the final answer to the user."""
    if move is None:
        return f"send_msg_to_user({json.dumps(final)})"
    match move.kind:
        case "click":
            bid = bid_of(move, axtree)
            if bid is None:
                return f"mouse_click({move.x or 0:.0f}, {move.y or 0:.0f})"
            return f"click({json.dumps(bid)})"
        case "type":
            return f"keyboard_type({json.dumps(move.text)})"
        case "press":
            return f"keyboard_press({json.dumps(move.text)})"
        case "scroll":
            return f"scroll(0, {move.dy:.0f})"
        case "goto":
            return f"goto({json.dumps(move.url)})"
        case "wait":
            return f"noop({1000 * move.seconds:.0f})"
    return f"send_msg_to_user({json.dumps(move.text or 'Done.')})"
