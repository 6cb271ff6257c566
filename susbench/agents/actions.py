"""The actions an agent may take, as one typed vocabulary every vendor's replies are mapped into.

Coordinates are CSS pixels of the viewport the agent was shown; `element` is a number from the
agent's latest element list (Set-of-Marks or accessibility tree). The models double as the tools
offered to chat models and as the JSON schema for servers without tool calls, so the vocabulary a
model is told about and the one the harness accepts cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, TypeAdapter, ValidationError, field_validator, model_validator

from susbench.agents.keys import UnknownKey, key_name
from susbench.core.models import Frozen

MAX_WAIT_S = 10.0
# The keys a click can be held with. A closed list, so a server that constrains replies to the schema
# cannot let a model fill `modifiers` with free strings until its token budget runs out (SmolLM2 did,
# on every step: benchmarks/results/local-model-2026-12-02.md).
Modifier = Literal["Alt", "Control", "Meta", "Shift"]
# What a chat model is offered: every action, or (`elements`) only what a text-only model does by
# element number, as BrowserGym's `bid` action set - no coordinates, buttons or held keys to fill in.
ActionSpace = Literal["full", "elements"]
ELEMENT_ACTIONS: dict[str, tuple[str, ...]] = {
    "click": ("element",),
    "type": ("element", "text"),
    "scroll": ("dy",),
    "back": (),
    "done": ("answer",),
}
LISTED_LINE = re.compile(r"\s*\[(\d+)\]")


def _element_number(value: Any) -> Any:
    """An element named by its listed line (`[18] button "Buy"`, as `element_by: line` asks) is
    element 18."""
    if isinstance(value, str) and (found := LISTED_LINE.match(value)):
        return int(found.group(1))
    return value


ElementNumber = Annotated[int, BeforeValidator(_element_number)]


def _spelled(key: Any) -> Any:
    """A held key in Playwright's spelling; one no keyboard has is left as given, for the error to name."""
    try:
        return key_name(str(key))
    except UnknownKey:
        return key


class Point(Frozen):
    x: float
    y: float


class Click(Frozen):
    """Click with the mouse at (x, y), or at the centre of element N."""

    action: Literal["click"] = "click"
    x: float | None = Field(default=None, description="viewport x in CSS px")
    y: float | None = Field(default=None, description="viewport y in CSS px")
    element: ElementNumber | None = Field(
        default=None, description="an element number from the latest element list"
    )
    button: Literal["left", "right", "middle"] = "left"
    clicks: int = Field(default=1, ge=1, le=3, description="2 for a double click")
    modifiers: tuple[Modifier, ...] = Field(
        default=(), max_length=4, description="keys held while clicking, e.g. Shift"
    )

    @field_validator("modifiers", mode="before")
    @classmethod
    def _key_names(cls, value: Any) -> Any:
        """Vendors spell held keys their own way (`ctrl`, `CTRL`, `cmd`): one spelling here."""
        if not isinstance(value, list | tuple):
            return value
        return tuple(_spelled(key) for key in value)

    @model_validator(mode="after")
    def _one_target(self) -> Click:
        if (self.element is None) == (self.x is None or self.y is None):
            raise ValueError("give either x and y, or element")
        return self


class TypeText(Frozen):
    """Type text with the keyboard into the focused field (clicking element N first, if given)."""

    action: Literal["type"] = "type"
    text: str
    element: ElementNumber | None = None


class Press(Frozen):
    """Press a key or a chord, e.g. Enter, Escape, Control+a."""

    action: Literal["press"] = "press"
    keys: str = Field(description="a key or chord: Enter, Tab, ArrowDown, Control+a")
    hold_s: float = Field(default=0.0, ge=0, le=MAX_WAIT_S, description="hold the keys down this long")


class Scroll(Frozen):
    """Turn the mouse wheel at (x, y) (default: the viewport's centre); positive dy scrolls down."""

    action: Literal["scroll"] = "scroll"
    dx: float = 0.0
    dy: float = 0.0
    x: float | None = None
    y: float | None = None


class Move(Frozen):
    """Move the mouse to (x, y) without clicking (hover)."""

    action: Literal["move"] = "move"
    x: float
    y: float


class Drag(Frozen):
    """Press the left button at the first point, move through the others, release at the last."""

    action: Literal["drag"] = "drag"
    path: tuple[Point, ...] = Field(min_length=2)


class MouseButton(Frozen):
    """Press or release the left mouse button at (x, y) (default: where the mouse is)."""

    action: Literal["mouse_down", "mouse_up"]
    x: float | None = None
    y: float | None = None


class Goto(Frozen):
    """Open a URL in the current tab."""

    action: Literal["goto"] = "goto"
    url: str = Field(min_length=1)


class History(Frozen):
    """Go back (or forward) in the current tab's history."""

    action: Literal["back", "forward"] = "back"


class SwitchTab(Frozen):
    """Bring tab N (0-based, as listed under Tabs) to the front."""

    action: Literal["switch_tab"] = "switch_tab"
    tab: int = Field(ge=0)


class Wait(Frozen):
    """Do nothing for a while, e.g. while a page loads."""

    action: Literal["wait"] = "wait"
    seconds: float = Field(default=1.0, gt=0, le=MAX_WAIT_S)


class Screenshot(Frozen):
    """Look again without acting."""

    action: Literal["screenshot"] = "screenshot"


class Done(Frozen):
    """Stop: the task is finished (or cannot be finished); `answer` is the final message."""

    action: Literal["done"] = "done"
    answer: str = ""


AgentAction = Annotated[
    Click
    | TypeText
    | Press
    | Scroll
    | Move
    | Drag
    | MouseButton
    | Goto
    | History
    | SwitchTab
    | Wait
    | Screenshot
    | Done,
    Field(discriminator="action"),
]
ACTION_ADAPTER: TypeAdapter[AgentAction] = TypeAdapter(AgentAction)

# The actions offered to chat models, by the name of the tool (or the JSON "action") that asks for them.
CHAT_ACTIONS: dict[str, type[Frozen]] = {
    "click": Click,
    "type": TypeText,
    "press": Press,
    "scroll": Scroll,
    "goto": Goto,
    "back": History,
    "switch_tab": SwitchTab,
    "wait": Wait,
    "done": Done,
}


class ActionRefused(Exception):
    """An action that cannot be carried out as asked; the message is fed back to the model."""


def parse_action(data: Any, space: ActionSpace = "full") -> AgentAction:
    """A model's action (already decoded JSON) as an `AgentAction`, or `ActionRefused` saying what is wrong.

    `double_click` is accepted as a click with two clicks. In the `elements` space only its actions
    are taken; the full space takes every action the harness knows.
    """
    if isinstance(data, dict) and data.get("action") == "double_click":
        data = {**data, "action": "click", "clicks": 2}
    try:
        action = ACTION_ADAPTER.validate_python(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'][1:]) or 'action'}: {error['msg']}"
            for error in exc.errors(include_url=False)
        )
        raise ActionRefused(f"invalid action {_shorten(data)}: {problems}") from None
    if space == "elements" and action.action not in ELEMENT_ACTIONS:
        raise ActionRefused(
            f"unknown action {action.action!r}; the actions are: {', '.join(ELEMENT_ACTIONS)}"
        )
    return action


def offered_actions(space: ActionSpace) -> dict[str, tuple[type[Frozen], tuple[str, ...] | None]]:
    """The actions a chat model is offered, each with the fields it may fill (None: all of them)."""
    if space == "full":
        return {name: (model, None) for name, model in CHAT_ACTIONS.items()}
    return {name: (CHAT_ACTIONS[name], fields) for name, fields in ELEMENT_ACTIONS.items()}


def parameters_schema(model: type[Frozen], fields: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A tool's JSON-schema parameters: the action's fields (or the `fields` named) without the
    `action` tag."""
    schema = model.model_json_schema()
    properties = {
        name: spec
        for name, spec in schema.get("properties", {}).items()
        if name != "action" and (fields is None or name in fields)
    }
    required = [name for name in schema.get("required", []) if name in properties]
    result: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if "$defs" in schema:
        result["$defs"] = schema["$defs"]
    return result


# Actions that need exactly one of several groups of fields (Click's validator): the JSON schema has a
# variant per group, so a server that constrains replies to it cannot produce a click the harness
# refuses (SmolLM2 wrote `"element": null` with no x and y on every step of a page without its number).
ONE_TARGET: dict[str, tuple[tuple[str, ...], ...]] = {"click": (("element",), ("x", "y"))}


def action_schema(
    elements: Sequence[int] | None = None,
    space: ActionSpace = "full",
    lines: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The JSON schema of one chat action (for `response_format` on servers without tools).

    Given the latest observation's element numbers, `element` may only be one of them: a server that
    constrains replies to the schema then cannot let a model name an element that is not on the page
    (SmolLM2 named the viewport's width, 1280, when the prompt's example had no number to copy).
    Given their listed lines instead, `element` is one of those lines."""
    variants = []
    for name, (model, fields) in offered_actions(space).items():
        parameters = parameters_schema(model, fields)
        parameters["properties"] = {"action": {"const": name}, **parameters["properties"]}
        parameters["required"] = ["action", *parameters["required"]]
        if "element" in parameters["properties"]:
            parameters["properties"]["element"] = _element_spec(
                parameters["properties"]["element"], elements, lines
            )
        groups = ONE_TARGET.get(name)
        if groups is None:
            variants.append(parameters)
            continue
        for group in groups:
            if any(field not in parameters["properties"] for field in group):
                continue  # not offered in this action space
            nameable = lines if lines is not None else elements
            if "element" in group and nameable is not None and not nameable:
                continue  # no element on the page to name
            others = {field for other in groups if other is not group for field in other}
            properties = {
                field: _not_null(spec) if field in group else spec
                for field, spec in parameters["properties"].items()
                if field not in others
            }
            variants.append(
                {**parameters, "properties": properties, "required": [*parameters["required"], *group]}
            )
    return {"type": "object", "anyOf": variants}


def _element_spec(
    spec: dict[str, Any], elements: Sequence[int] | None, lines: Sequence[str] | None
) -> dict[str, Any]:
    """`element`'s schema: any number, one of the page's numbers, or one of its listed lines."""
    if lines is None and elements is None:
        return spec
    kept = {key: value for key, value in spec.items() if key != "anyOf"}
    if lines is not None:
        kept["description"] = "an element's line, as listed"
    choices = list(lines) if lines is not None else sorted(elements or ())
    listed = [{"enum": choices}] if choices else []
    return {**kept, "anyOf": [*listed, {"type": "null"}]}


def _not_null(spec: dict[str, Any]) -> dict[str, Any]:
    """A field's schema without its `null` alternative or its null default: the field must be given."""
    options = [option for option in spec.get("anyOf", []) if option != {"type": "null"}]
    kept = {key: value for key, value in spec.items() if key not in ("anyOf", "default")}
    return {**kept, **options[0]} if len(options) == 1 else {**kept, "anyOf": options}


def _shorten(data: Any, limit: int = 120) -> str:
    text = repr(data)
    return text if len(text) <= limit else text[: limit - 3] + "..."
