"""Key names as models write them (xdotool's `ctrl+Return`, OpenAI's `["CTRL", "A"]`, a person's
`Enter`) turned into the key names Playwright's keyboard presses."""

from __future__ import annotations

import re

ALIASES = {
    "ctrl": "Control",
    "control": "Control",
    "cmd": "Meta",
    "command": "Meta",
    "meta": "Meta",
    "super": "Meta",
    "win": "Meta",
    "alt": "Alt",
    "option": "Alt",
    "shift": "Shift",
    "enter": "Enter",
    "return": "Enter",
    "kp_enter": "Enter",
    "esc": "Escape",
    "escape": "Escape",
    "tab": "Tab",
    "space": "Space",
    "backspace": "Backspace",
    "delete": "Delete",
    "del": "Delete",
    "insert": "Insert",
    "home": "Home",
    "end": "End",
    "pageup": "PageUp",
    "page_up": "PageUp",
    "prior": "PageUp",
    "pagedown": "PageDown",
    "page_down": "PageDown",
    "next": "PageDown",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "arrowup": "ArrowUp",
    "arrowdown": "ArrowDown",
    "arrowleft": "ArrowLeft",
    "arrowright": "ArrowRight",
    "minus": "-",
    "plus": "+",
    "equal": "=",
    "comma": ",",
    "period": ".",
    "slash": "/",
}
FUNCTION_KEY = re.compile(r"^f([1-9]|1[0-2])$")


class UnknownKey(ValueError):
    """A key name no keyboard has."""


def key_name(name: str) -> str:
    """One key, in Playwright's spelling."""
    text = name.strip()
    if len(text) == 1:
        return text
    lowered = text.lower()
    if lowered in ALIASES:
        return ALIASES[lowered]
    if FUNCTION_KEY.match(lowered):
        return lowered.upper()
    raise UnknownKey(f"unknown key {name!r}")


def key_combination(keys: str | list[str] | tuple[str, ...]) -> str:
    """A chord for `keyboard.press`: `"ctrl+shift+t"` or `["CTRL", "A"]` -> `"Control+a"`.

    A lone `+` is the plus key, not a separator.
    """
    parts = [keys] if isinstance(keys, str) and keys.strip() == "+" else keys
    if isinstance(parts, str):
        parts = [part for part in re.split(r"(?<!^)\+", parts) if part]
    if not parts:
        raise UnknownKey("no key given")
    named = [key_name(part) for part in parts]
    # A held modifier with a letter: Playwright presses "Control+a", and "Control+A" would add Shift.
    return "+".join(key.lower() if len(key) == 1 and len(named) > 1 else key for key in named)
