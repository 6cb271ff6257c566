"""Observations taken without touching the page: what is on screen, and the elements a person can use.

Everything is read through Chrome DevTools Protocol domains that run no script in the page, add
no attribute and fire no event: `Page.captureScreenshot` (the viewport's pixels),
`Accessibility.getFullAXTree` (roles, names, values, states), `DOMSnapshot.captureSnapshot` (layout
boxes) and `DOM.getNodeForLocation` (is the element's centre really on top). Element numbers stay
on the harness side (number -> DOM node and box); the page never learns them. The accessibility
tree reaches into shadow roots, closed ones included, so what a person sees is listed whoever drew
it; and it holds only what a person perceives (role, accessible name, value, state), never ids,
classes or data attributes.

Kinds: `screenshot` (the image alone), `som` (the image with numbered boxes around the visible
interactive elements, and their list), `axtree` (the accessibility tree as text, with numbers).
All three start with the URL, the title, the open tabs and the scroll position.
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from pydantic import Field

from susbench.agents.drawing import draw_marks
from susbench.agents.window import BrowserWindow, Tab, ViewportState
from susbench.browser.bridge import Box
from susbench.core.models import Frozen
from susbench.operators.base import ObservationKind

INTERACTIVE_ROLES = frozenset(
    {
        "button",
        "link",
        "checkbox",
        "radio",
        "switch",
        "textbox",
        "searchbox",
        "combobox",
        "listbox",
        "option",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "tab",
        "slider",
        "spinbutton",
        "treeitem",
    }
)
# Containers worth a line in the tree even without a name: landmarks and structure a reader uses.
SHOWN_UNNAMED = frozenset(
    {
        "main",
        "navigation",
        "banner",
        "contentinfo",
        "form",
        "search",
        "dialog",
        "alertdialog",
        "alert",
        "list",
        "table",
        "row",
        "heading",
    }
)
TRANSPARENT_ROLES = frozenset({"none", "generic", "InlineTextBox", "LineBreak", "ignored"})
STATE_PROPERTIES = ("checked", "selected", "expanded", "disabled", "required", "pressed")
MAX_TREE_CHARS = 60_000
LISTED = re.compile(r"^\s*\[(\d+)\] ", re.MULTILINE)
SOM_HEADER = "Interactive elements on screen (numbered in the image):"
AXTREE_HEADER = "Accessibility tree ([N] = element number):"
COMPACT_HEADER = "On screen, in reading order ([N] = element number; scroll for more):"


class Element(Frozen):
    """An interactive element, as a person perceives it, and where the harness finds it."""

    id: int = Field(ge=1)
    role: str
    name: str
    value: str | None = None
    states: tuple[str, ...] = ()
    box: Box
    in_viewport: bool
    visible: bool = Field(description="in the viewport and on top at its centre (not covered)")
    node: int = Field(description="the DOM node's backend id: harness side only, never shown to a model")

    def line(self) -> str:
        """How the element is listed for a model: number, role, name, value and states."""
        parts = [f"[{self.id}] {self.role}", _quoted(self.name)]
        if self.value is not None:
            parts.append('value="' + self.value.replace('"', "'") + '"')
        parts.extend(self.states)
        return " ".join(part for part in parts if part)


@dataclass
class Observation:
    """One look at the front tab. `image` is what the model is shown (None for `axtree`);
    `screenshot` is the plain viewport, kept for the trace."""

    kind: ObservationKind
    url: str
    title: str
    tabs: list[Tab]
    viewport: ViewportState
    screenshot: bytes
    image: bytes | None
    text: str
    elements: dict[int, Element] = field(default_factory=dict)
    taken_at_ms: int = 0
    observe_ms: float = 0.0

    @property
    def listed(self) -> dict[int, Element]:
        """The elements the text lists, by number (a compact or cut tree lists fewer than it found)."""
        return {
            number: self.elements[number]
            for number in map(int, LISTED.findall(self.text))
            if number in self.elements
        }


class Observer:
    """Takes observations of one kind from a browser window."""

    def __init__(self, window: BrowserWindow, kind: ObservationKind, compact: bool = False) -> None:
        self.window = window
        self.kind = kind
        self.compact = compact

    def observe(self) -> Observation:
        started = time.perf_counter()
        taken_at_ms = int(time.time() * 1000)
        cdp = self.window.cdp()
        viewport = self.window.viewport()
        tabs = self.window.tabs()
        front = next(tab for tab in tabs if tab.active)
        facts = page_facts(front, tabs, viewport)
        # Elements before pixels: what appears in between (a delayed pop-up) is at least seen.
        found = (
            None if self.kind == "screenshot" else self.read_elements(viewport, hit_test=self.kind == "som")
        )
        shot = base64.b64decode(cdp.send("Page.captureScreenshot", {"format": "png"})["data"])
        elements: dict[int, Element] = {}
        image: bytes | None = shot
        text = facts
        if found is not None:
            tree, elements, layout = found
            if self.kind == "som":
                shown = [element for element in elements.values() if element.visible]
                image = draw_marks(shot, [(element.id, element.box) for element in shown])
                listing = "\n".join(element.line() for element in shown) or "(none)"
                text = f"{facts}\n{SOM_HEADER}\n{listing}"
            else:
                image = None
                shown_in = layout.on_screen if self.compact else None
                header = COMPACT_HEADER if self.compact else AXTREE_HEADER
                text = f"{facts}\n{header}\n{tree.render(elements, shown_in)}"
        return Observation(
            kind=self.kind,
            url=front.url,
            title=front.title,
            tabs=tabs,
            viewport=viewport,
            screenshot=shot,
            image=image,
            text=text,
            elements=elements,
            taken_at_ms=taken_at_ms,
            observe_ms=1000 * (time.perf_counter() - started),
        )

    def read_elements(
        self, viewport: ViewportState, hit_test: bool
    ) -> tuple[AXTree, dict[int, Element], Layout]:
        """The accessibility tree, its numbered interactive elements (`visible` needs `hit_test`) and
        the layout they were placed with."""
        cdp = self.window.cdp()
        tree = AXTree(cdp.send("Accessibility.getFullAXTree")["nodes"])
        snapshot = cdp.send(
            "DOMSnapshot.captureSnapshot", {"computedStyles": [], "includePaintOrder": hit_test}
        )
        layout = Layout(snapshot, viewport)
        return tree, tree.elements(layout, viewport, hit_test=hit_test, cdp=cdp), layout


def data_url(png: bytes) -> str:
    """A PNG as the data URL that OpenAI-style APIs take for images."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def page_facts(front: Tab, tabs: list[Tab], viewport: ViewportState) -> str:
    """URL, title, tabs and scroll position: what a person reads off the browser's chrome."""
    listed = "; ".join(
        f"[{tab.index}] {tab.title or tab.url}" + (" (current)" if tab.active else "") for tab in tabs
    )
    bottom = viewport.scroll_y + viewport.height
    return (
        f"URL: {front.url}\nTitle: {front.title}\nTabs: {listed}\n"
        f"Viewport: {viewport.width}x{viewport.height} px, showing y={viewport.scroll_y:.0f}-{bottom:.0f} "
        f"of a {viewport.page_height:.0f} px page"
    )


class Layout:
    """Layout boxes (viewport coordinates), paint order and DOM ancestry of the main document, by
    backend node id."""

    def __init__(self, snapshot: dict[str, Any], viewport: ViewportState) -> None:
        document = snapshot["documents"][0]
        nodes, layout = document["nodes"], document["layout"]
        backend_ids: list[int] = nodes["backendNodeId"]
        parent_index: list[int] = nodes["parentIndex"]
        scroll_x, scroll_y = document.get("scrollOffsetX", 0.0), document.get("scrollOffsetY", 0.0)
        self.parent = {
            backend: backend_ids[parent]
            for backend, parent in zip(backend_ids, parent_index, strict=True)
            if parent >= 0
        }
        self.boxes: dict[int, Box] = {}
        self.painting: list[tuple[int, int, float, float, float, float]] = []
        self.knows_paint_order = "paintOrders" in layout
        orders = layout.get("paintOrders") or [0] * len(layout["nodeIndex"])
        for node_index, (x, y, width, height), order in zip(
            layout["nodeIndex"], layout["bounds"], orders, strict=True
        ):
            backend = backend_ids[node_index]
            if width > 0 and height > 0:
                left, top = x - scroll_x, y - scroll_y
                self.painting.append((order, backend, left, top, left + width, top + height))
                if backend not in self.boxes:
                    self.boxes[backend] = Box(x=left, y=top, width=width, height=height)
        self.painting.sort(reverse=True)  # topmost first
        self.viewport = viewport

    def on_screen(self, backend: int | None) -> bool:
        """Whether the node has a layout box inside the viewport (what a person can see without
        scrolling); nodes without a box of their own (containers) are not."""
        box = self.boxes.get(backend) if backend is not None else None
        return box is not None and box.clipped(self.viewport.width, self.viewport.height) is not None

    def may_cover(self, backend: int, x: float, y: float) -> bool:
        """Whether the box painted last at (x, y) lies outside the element: only then is a real hit
        test (which also knows transparent overlays and pointer-events) worth its round trip."""
        if not self.knows_paint_order:
            return True
        for _, other, left, top, right, bottom in self.painting:
            if left <= x <= right and top <= y <= bottom:
                return not self.contains(backend, other)
        return True

    def contains(self, ancestor: int, node: int) -> bool:
        while True:
            if node == ancestor:
                return True
            if node not in self.parent:
                return False
            node = self.parent[node]


class AXTree:
    """The accessibility tree of the front tab's main frame."""

    def __init__(self, nodes: list[dict[str, Any]]) -> None:
        self.nodes = {node["nodeId"]: node for node in nodes}
        self.root = nodes[0]["nodeId"] if nodes else None

    def ordered(self) -> list[dict[str, Any]]:
        """Every node in document order."""
        found: list[dict[str, Any]] = []
        stack = [self.root] if self.root is not None else []
        while stack:
            node = self.nodes.get(stack.pop())
            if node is None:
                continue
            found.append(node)
            stack.extend(reversed(node.get("childIds", [])))
        return found

    def elements(
        self, layout: Layout, viewport: ViewportState, hit_test: bool, cdp: Any
    ) -> dict[int, Element]:
        """The rendered interactive elements, numbered from 1 in document order."""
        elements: dict[int, Element] = {}
        for node in self.ordered():
            role = _value(node.get("role"))
            backend = node.get("backendDOMNodeId")
            if node.get("ignored") or role not in INTERACTIVE_ROLES or backend not in layout.boxes:
                continue
            box = layout.boxes[backend]
            clipped = box.clipped(viewport.width, viewport.height)
            visible = clipped is not None and (
                not hit_test or _on_top(cdp, layout, backend, clipped, viewport)
            )
            number = len(elements) + 1
            elements[number] = Element(
                id=number,
                role=role,
                name=_text(_value(node.get("name"))),
                value=_element_value(role, node),
                states=_states(node),
                box=box,
                in_viewport=clipped is not None,
                visible=visible,
                node=backend,
            )
        return elements

    def render(
        self, elements: dict[int, Element], shown_in: Callable[[int | None], bool] | None = None
    ) -> str:
        """The tree as indented text, interactive elements with their numbers.

        With `shown_in` (compact, for small context windows) only the nodes it accepts are listed,
        one flat line each: the containers' lines and the indentation are left out."""
        numbers = {element.node: element.id for element in elements.values()}
        lines: list[str] = []

        def visit(node_id: str, depth: int, parent_name: str) -> None:
            node = self.nodes.get(node_id)
            if node is None:
                return
            role = _value(node.get("role"))
            name = _text(_value(node.get("name")))
            children = node.get("childIds", [])
            backend = node.get("backendDOMNodeId")
            line = None
            if role == "StaticText":
                line = None if not name or name == parent_name else _quoted(name)
            elif (
                not node.get("ignored") and role not in TRANSPARENT_ROLES and (name or role in SHOWN_UNNAMED)
            ):
                number = numbers.get(backend)
                if number is not None:
                    line = elements[number].line()
                else:
                    line = " ".join(part for part in (role, _quoted(name), *_states(node)) if part)
                    level = _property(node, "level")
                    line += f" level={level}" if role == "heading" and level else ""
            if line is not None and shown_in is not None:
                line = line if role == "heading" or _is_leaf_line(role) else None
                line = line if line is not None and shown_in(backend) else None
            if line is not None:
                lines.append(("  " * depth if shown_in is None else "") + line)
            for child in children:
                visit(child, depth + (line is not None), name if line is not None else parent_name)

        if self.root is not None:
            visit(self.root, 0, "")
        text = "\n".join(lines)
        if len(text) > MAX_TREE_CHARS:
            text = text[:MAX_TREE_CHARS] + "\n(the rest of the tree is cut)"
        return text


def _is_leaf_line(role: str | None) -> bool:
    """Lines that carry what a person reads or uses: text and interactive elements, not containers."""
    return role == "StaticText" or role in INTERACTIVE_ROLES or role in ("img", "image", "status", "alert")


def _on_top(cdp: Any, layout: Layout, backend: int, clipped: Box, viewport: ViewportState) -> bool:
    """Whether a click at the centre of the element's visible part lands on the element (the hit
    test takes page coordinates)."""
    x, y = clipped.center
    if not layout.may_cover(backend, x, y):
        return True
    where = {
        "x": int(x + viewport.scroll_x),
        "y": int(y + viewport.scroll_y),
        "ignorePointerEventsNone": True,
    }
    try:
        hit = cdp.send("DOM.getNodeForLocation", where)
    except PlaywrightError:  # nothing is drawn there (e.g. the page is being replaced)
        return False
    return layout.contains(backend, hit.get("backendNodeId", -1))


def _value(field_value: dict[str, Any] | None) -> Any:
    return None if field_value is None else field_value.get("value")


def _property(node: dict[str, Any], name: str) -> Any:
    for item in node.get("properties", []):
        if item.get("name") == name:
            return _value(item.get("value"))
    return None


def _states(node: dict[str, Any]) -> tuple[str, ...]:
    states = []
    for name in STATE_PROPERTIES:
        value = _property(node, name)
        if value in (True, "true"):
            states.append(name)
        elif name == "checked" and value in (False, "false"):
            states.append("unchecked")
        elif name == "checked" and value == "mixed":
            states.append("partly checked")
        elif name == "expanded" and value is False:
            states.append("collapsed")
    return tuple(states)


def _element_value(role: str, node: dict[str, Any]) -> str | None:
    """The value a person reads in a field (text typed, option chosen); None for buttons and links."""
    if role not in ("textbox", "searchbox", "combobox", "slider", "spinbutton", "listbox"):
        return None
    value = _value(node.get("value"))
    return "" if value is None else _text(str(value))


def _text(value: Any) -> str:
    return " ".join(str(value or "").split())


def _quoted(text: str) -> str:
    return "" if not text else '"' + text.replace('"', "'") + '"'
